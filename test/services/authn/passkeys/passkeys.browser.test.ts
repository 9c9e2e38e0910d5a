import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { ChangeEntry } from '../../../../src/services/authn/modules/audit/index.ts'
import { chromiumSkipReason, launchChromium } from '../../../helpers/browser.ts'
import { ADMIN_EMAIL, addEperson, authnServices, BrowserClient, loggedIn, startAuthn, statusOf } from '../helpers.ts'

let browser: Browser | undefined

before(async () => {
  if (chromiumSkipReason()) return
  // WebAuthn needs a secure context and an RP ID that is a host name: http://localhost is both.
  browser = await launchChromium(['--host-resolver-rules=MAP localhost 127.0.0.1'])
})
after(() => browser?.close())

/**
 * The repository's page, on http://localhost:<port>, in Chromium with a virtual authenticator
 * (CTAP2, resident keys, user verification) attached over the DevTools protocol: real key pairs,
 * real attestation and assertion signatures, no person to touch anything.
 */
async function pageWithAuthenticator(t: TestContext, b: Browser): Promise<{ page: Page; origin: string }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>repository</title>'))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`
  const context = await b.newContext()
  t.after(() => context.close())
  const page = await context.newPage()
  await page.goto(origin)
  await page.addScriptTag({ content: PAGE_SCRIPT })
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  return { page, origin }
}

/**
 * Run in the page (plain JavaScript): the JSON options become navigator.credentials' binary ones,
 * and the credential it returns becomes JSON again, as @simplewebauthn/browser would do it.
 */
const PAGE_SCRIPT = `
  const b64 = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=')), (c) => c.charCodeAt(0))
  const enc = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
  const ids = (list) => (list ?? []).map((item) => ({ ...item, id: b64(item.id) }))
  window.createCredential = async (json) => {
    const publicKey = { ...json, challenge: b64(json.challenge), user: { ...json.user, id: b64(json.user.id) }, excludeCredentials: ids(json.excludeCredentials) }
    const credential = await navigator.credentials.create({ publicKey })
    const response = credential.response
    return {
      id: credential.id, rawId: enc(credential.rawId), type: credential.type,
      response: { clientDataJSON: enc(response.clientDataJSON), attestationObject: enc(response.attestationObject), transports: response.getTransports() },
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    }
  }
  window.getAssertion = async (json) => {
    const publicKey = { ...json, challenge: b64(json.challenge), allowCredentials: ids(json.allowCredentials) }
    const credential = await navigator.credentials.get({ publicKey })
    const response = credential.response
    return {
      id: credential.id, rawId: enc(credential.rawId), type: credential.type,
      response: {
        clientDataJSON: enc(response.clientDataJSON), authenticatorData: enc(response.authenticatorData), signature: enc(response.signature),
        userHandle: response.userHandle ? enc(response.userHandle) : undefined,
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    }
  }
`

interface PageApi {
  createCredential(options: unknown): Promise<{ id: string }>
  getAssertion(options: unknown): Promise<{ id: string }>
}

function createCredential(page: Page, options: unknown) {
  return page.evaluate((json) => (globalThis as unknown as PageApi).createCredential(json), options)
}

function getAssertion(page: Page, options: unknown) {
  return page.evaluate((json) => (globalThis as unknown as PageApi).getAssertion(json), options)
}

/** A passkey login as a browser front end makes it: CSRF pair, options, the authenticator, the answer. */
async function passkeyLogin(app: BrowserClient['app'], page: Page, userAgent?: string) {
  const client = new BrowserClient(app, '/api')
  await client.request('GET', 'security/csrf')
  const options = await client.request('POST', 'authn/passkeys/login/options')
  assert.equal(options.statusCode, 200, options.body)
  const credential = await getAssertion(page, options.json())
  const response = await client.request('POST', 'authn/passkeys/login', { json: { credential }, auth: false, headers: userAgent ? { 'user-agent': userAgent } : {} })
  return { client, response, credential }
}

test('register a passkey while logged in, log in with it (method passkey, a session like any other), list it, remove it', async (t) => {
  if (!browser) return t.skip(String(chromiumSkipReason()))
  const { page, origin } = await pageWithAuthenticator(t, browser)
  const entries: ChangeEntry[] = []
  const test_ = await startAuthn(t, { AUTHN_PASSKEY_RP_ID: 'localhost', AUTHN_PASSKEY_ORIGINS: origin }, { deps: { authn: { auditLog: { change: (entry) => entries.push(entry) } } } })
  const { app } = test_
  await addEperson(test_, 'user@example.org')

  const anonymous = await statusOf(app)
  const challenge = String(anonymous.response.headers['www-authenticate'])
  assert.match(challenge, /^password realm="DSpace REST API", passkey realm="DSpace REST API", location="http:\/\/[^"]+\/api\/authn\/passkeys\/login\/options"$/)

  const admin = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const options = await admin.request('POST', 'authn/passkeys/registration/options')
  assert.equal(options.statusCode, 200, options.body)
  assert.equal(options.json().rp.id, 'localhost')
  assert.equal(options.json().authenticatorSelection.residentKey, 'required')
  const credential = await createCredential(page, options.json())
  const registered = await admin.request('POST', 'authn/passkeys', { json: { name: 'Laptop', credential } })
  assert.equal(registered.statusCode, 201, registered.body)
  assert.equal(registered.json().id, credential.id)
  assert.equal(registered.json().name, 'Laptop')
  // The same answer again: its challenge was used.
  const replayed = await admin.request('POST', 'authn/passkeys', { json: { name: 'Laptop', credential } })
  assert.equal(replayed.statusCode, 400)
  assert.equal(replayed.json().message, 'Unknown, used or expired passkey challenge: ask for new registration options')

  const userAgent = await page.evaluate(() => navigator.userAgent)
  const { client, response, credential: assertion } = await passkeyLogin(app, page, userAgent)
  assert.equal(response.statusCode, 200, response.body)
  assert.match(String(response.headers.authorization), /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/)
  const status = await statusOf(app, client.token)
  assert.equal(status.body.authenticated, true)
  assert.equal(status.body.authenticationMethod, 'passkey')
  assert.equal((status.body._embedded?.eperson as { email: string }).email, ADMIN_EMAIL)
  const sessions = (await client.request('GET', 'authn/sessions')).json()._embedded.sessions
  const current = sessions.find((item: { current: boolean }) => item.current)
  assert.equal(current.method, 'passkey')
  assert.match(current.device, /Chrome \d+ on Linux/)

  // A replayed assertion is refused like any failed login.
  const replay = new BrowserClient(app, '/api')
  await replay.request('GET', 'security/csrf')
  const again = await replay.request('POST', 'authn/passkeys/login', { json: { credential: assertion }, auth: false })
  assert.equal(again.statusCode, 401)
  assert.equal(again.headers['www-authenticate'], challenge)
  assert.equal(again.headers.authorization, undefined)

  const listed = (await admin.request('GET', 'authn/passkeys')).json()
  assert.equal(listed.page.totalElements, 1)
  assert.equal(listed._embedded.passkeys[0].lastUsedAt, '2026-01-01T00:00:00.000Z')
  const user = await loggedIn(app, 'user@example.org', undefined, '/api')
  assert.equal((await user.request('DELETE', `authn/passkeys/${credential.id}`)).statusCode, 404)
  assert.equal((await user.request('GET', 'authn/passkeys')).json().page.totalElements, 0)

  assert.equal((await admin.request('DELETE', `authn/passkeys/${credential.id}`)).statusCode, 204)
  assert.equal((await passkeyLogin(app, page)).response.statusCode, 401)
  const me = (status.body._embedded?.eperson as { uuid: string }).uuid
  assert.deepEqual(
    entries.map((entry) => [entry.action, entry.eperson, entry.target, entry.actor]),
    [
      ['passkey.register', me, credential.id, me],
      ['passkey.remove', me, credential.id, me],
    ],
  )
})

test('options expire after 5 minutes; the account must still be able to log in; a personal access token cannot register a passkey', async (t) => {
  if (!browser) return t.skip(String(chromiumSkipReason()))
  const { page, origin } = await pageWithAuthenticator(t, browser)
  const test_ = await startAuthn(t, { AUTHN_PASSKEY_RP_ID: 'localhost', AUTHN_PASSKEY_ORIGINS: origin })
  const { app, clock } = test_
  const user = await addEperson(test_, 'user@example.org')
  const client = await loggedIn(app, 'user@example.org', undefined, '/api')
  const options = (await client.request('POST', 'authn/passkeys/registration/options')).json()
  clock.advance(5 * 60_000)
  const late = await client.request('POST', 'authn/passkeys', { json: { credential: await createCredential(page, options) } })
  assert.equal(late.statusCode, 400)

  const fresh = (await client.request('POST', 'authn/passkeys/registration/options')).json()
  assert.equal((await client.request('POST', 'authn/passkeys', { json: { credential: await createCredential(page, fresh) } })).statusCode, 201)
  const { epersons } = await authnServices(test_)
  await epersons.setCanLogIn(user.uuid, false)
  assert.equal((await passkeyLogin(app, page)).response.statusCode, 401)
  await epersons.setCanLogIn(user.uuid, true)
  assert.equal((await passkeyLogin(app, page)).response.statusCode, 200)

  const admin = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const pat = (await admin.request('POST', 'authn/tokens', { json: { name: 'ci', expiresAt: '2026-02-01T00:00:00.000Z', scopes: ['full'] } })).json().token
  const refused = await app.inject({ method: 'POST', url: '/api/authn/passkeys/registration/options', headers: { authorization: `Bearer ${pat}` } })
  assert.equal(refused.statusCode, 403)
})

test('without AUTHN_PASSKEY_RP_ID there are no passkey routes and WWW-Authenticate is unchanged', async (t) => {
  const { app } = await startAuthn(t)
  const anonymous = await statusOf(app)
  assert.equal(anonymous.response.headers['www-authenticate'], 'password realm="DSpace REST API"')
  assert.equal((await app.inject({ method: 'GET', url: '/api/authn/passkeys' })).statusCode, 404)
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  assert.equal((await client.request('POST', 'authn/passkeys/login/options')).statusCode, 404)
})
