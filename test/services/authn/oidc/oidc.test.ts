import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { type Cleanup, createTestDatabase } from '../../../helpers/build-app.ts'
import { addEperson, authnServices, decodeJwt, startAuthn } from '../helpers.ts'

const UI = 'https://ui.example.org'

interface Account {
  /** Absent for an ORCID-shaped account: ORCID's ID token and userinfo carry no e-mail. */
  email?: string
  verified?: boolean
  /** The subject; the e-mail by default, an ORCID iD for ORCID-shaped claims. */
  sub?: string
}

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1, whose login and consent
 * screens answer at once for `account`, so a test can drive the whole redirect dance.
 */
async function startProvider(t: Cleanup, account: { current: Account }) {
  let provider: Provider | undefined
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!provider) {
      res.statusCode = 503
      res.end()
      return
    }
    const current = provider
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        const details = await current.interactionDetails(req, res)
        if (details.prompt.name === 'login') {
          await current.interactionFinished(req, res, { login: { accountId: account.current.sub ?? account.current.email ?? '' } }, { mergeWithLastSubmission: false })
          return
        }
        const grant = new current.Grant({ accountId: String(details.session?.accountId), clientId: String(details.params.client_id) })
        grant.addOIDCScope(String(details.params.scope))
        await current.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
      })().catch((error: unknown) => {
        res.statusCode = 500
        res.end(String(error))
      })
      return
    }
    current.callback()(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test', alg: 'RS256', use: 'sig' }
  return {
    issuer,
    configure(redirectUri: string) {
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: 'triad',
            client_secret: 'triad-client-secret-for-tests',
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
        findAccount: async (_ctx: unknown, sub: string) => ({
          accountId: sub,
          claims: async () => ({
            sub,
            ...(account.current.email === undefined ? {} : { email: account.current.email, email_verified: account.current.verified ?? true }),
            given_name: 'Olga',
            family_name: 'Idp',
          }),
        }),
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        features: { devInteractions: { enabled: false } },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        jwks: { keys: [signingKey] },
        conformIdTokenClaims: false,
      })
    },
  }
}

/** A browser: one cookie jar for both hosts (cookies ignore ports), redirects followed by hand. */
class Browser {
  jar = new Map<string, string>()
  xsrf: string | undefined

  async go(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers }
    if (this.jar.size > 0) headers.cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const equals = pair.indexOf('=')
      const name = pair.slice(0, equals)
      const value = pair.slice(equals + 1)
      if (!value || /max-age=0|expires=thu, 01 jan 1970/i.test(cookie)) this.jar.delete(name)
      else this.jar.set(name, value)
    }
    const xsrf = response.headers.get('dspace-xsrf-token')
    if (xsrf) this.xsrf = xsrf
    return response
  }

  /** Follows redirects until one leaves for `stopAt` (the UI); returns that last response. */
  async follow(url: string, stopAt: string): Promise<Response> {
    let response = await this.go(url)
    for (let hops = 0; hops < 12 && response.status >= 300 && response.status < 400; hops++) {
      const location = new URL(response.headers.get('location') ?? '', url).toString()
      if (location.startsWith(stopAt)) return response
      url = location
      response = await this.go(url)
    }
    return response
  }

  login(api: string) {
    return this.go(`${api}/authn/login`, { method: 'POST', headers: { 'x-xsrf-token': this.xsrf ?? '' } })
  }
}

async function setup(t: Cleanup, env: Record<string, string> = {}) {
  const account = { current: { email: 'olga@example.org' } as Account }
  const idp = await startProvider(t, account)
  const test_ = await startAuthn(
    t,
    {
      AUTHN_OIDC_ISSUER: idp.issuer,
      AUTHN_OIDC_CLIENT_ID: 'triad',
      AUTHN_OIDC_CLIENT_SECRET: 'triad-client-secret-for-tests',
      AUTHN_OIDC_ALLOW_HTTP: 'true',
      AUTHN_ALLOWED_ORIGINS: UI,
      ...env,
    },
    { database: await createTestDatabase(t) },
  )
  const address = await test_.app.listen({ port: 0, host: '127.0.0.1' })
  const api = `${address}/server/api`
  idp.configure(`${api}/authn/oidc`)
  return { test_, api, account }
}

test('OIDC end to end: WWW-Authenticate location → provider → callback → hand-off cookie → POST /authn/login → token', async (t) => {
  const { test_, api } = await setup(t, { AUTHN_OIDC_GROUPS: 'Federated' })
  const olga = await addEperson(test_, 'olga@example.org')
  const browser = new Browser()

  const status = await browser.go(`${api}/authn/status`)
  const challenge = status.headers.get('www-authenticate') ?? ''
  assert.equal(challenge, `password realm="DSpace REST API", oidc realm="DSpace REST API", location="${api}/authn/oidc"`)
  const methods = [...challenge.matchAll(/(\w+ (\w+=((".*?")|[^,]*)(, )?)*)/g)].map((match) => match[0].split(' ')[0])
  assert.deepEqual(methods, ['password', 'oidc'])
  const location = /location="([^"]+)"/.exec(challenge)?.[1] ?? ''

  const landing = await browser.follow(`${location}?redirectUrl=${encodeURIComponent(`${UI}/mydspace`)}`, UI)
  assert.equal(landing.status, 302)
  assert.equal(landing.headers.get('location'), `${UI}/mydspace`)
  const handoff = landing.headers.getSetCookie().find((cookie) => cookie.startsWith('Authorization-cookie='))
  assert.match(handoff ?? '', /; Max-Age=60; Path=\/server\/api\/authn; HttpOnly; SameSite=Lax$/)
  const code = browser.jar.get('Authorization-cookie') ?? ''

  const login = await browser.login(api)
  assert.equal(login.status, 200)
  const token = (login.headers.get('authorization') ?? '').slice('Bearer '.length)
  const { payload } = decodeJwt(token)
  assert.equal(payload.eid, olga.uuid)
  assert.equal(payload.authenticationMethod, 'oidc')
  const federated = await (await authnServices(test_)).epersons.findGroupByName('Federated')
  assert.deepEqual(payload.sg, [federated?.uuid])
  assert.equal(browser.jar.has('Authorization-cookie'), false)
  const me = await fetch(`${api}/authn/status`, { headers: { authorization: `Bearer ${token}` } })
  const body = (await me.json()) as { authenticationMethod: string; _embedded: { eperson: { email: string } } }
  assert.equal(body.authenticationMethod, 'oidc')
  assert.equal(body._embedded.eperson.email, 'olga@example.org')

  // The hand-off code works once.
  browser.jar.set('Authorization-cookie', code)
  assert.equal((await browser.login(api)).status, 401)
})

test('OIDC refuses a redirectUrl on a foreign host, an unknown e-mail without self-registration, and an unverified e-mail', async (t) => {
  const { api, account } = await setup(t)
  const browser = new Browser()
  await browser.go(`${api}/security/csrf`)
  const foreign = await browser.go(`${api}/authn/oidc?redirectUrl=${encodeURIComponent('https://evil.example/x')}`)
  assert.equal(foreign.status, 400)
  assert.equal(((await foreign.json()) as { message: string }).message, 'Invalid redirectURL! Must match server or ui hostname.')

  account.current = { email: 'stranger@example.org' }
  const stranger = await browser.follow(`${api}/authn/oidc?redirectUrl=${encodeURIComponent(`${UI}/`)}`, UI)
  assert.equal(stranger.status, 401)
  assert.equal(browser.jar.has('Authorization-cookie'), false)

  const replayed = await browser.go(`${api}/authn/oidc?code=abc&state=never-issued`)
  assert.equal(replayed.status, 400)
})

test('with AUTHN_OIDC_AUTO_REGISTER the eperson is created from the claims; an unverified address is refused', async (t) => {
  const { test_, api, account } = await setup(t, { AUTHN_OIDC_AUTO_REGISTER: 'true' })
  account.current = { email: 'New.Comer@Example.org' }
  const browser = new Browser()
  const landing = await browser.follow(`${api}/authn/oidc?redirectUrl=${encodeURIComponent(`${UI}/`)}`, UI)
  assert.equal(landing.status, 302)
  await browser.go(`${api}/security/csrf`)
  assert.equal((await browser.login(api)).status, 200)
  const created = await (await authnServices(test_)).epersons.findByEmail('new.comer@example.org')
  assert.equal(created?.first_name, 'Olga')

  account.current = { email: 'unverified@example.org', verified: false }
  const other = new Browser()
  assert.equal((await other.follow(`${api}/authn/oidc?redirectUrl=${encodeURIComponent(`${UI}/`)}`, UI)).status, 401)
  assert.equal(await (await authnServices(test_)).epersons.findByEmail('unverified@example.org'), undefined)
})

/** A whole sign-on in a fresh browser; the login's status and the token's eperson. */
async function signInThrough(api: string) {
  const browser = new Browser()
  await browser.follow(`${api}/authn/oidc?redirectUrl=${encodeURIComponent(`${UI}/`)}`, UI)
  await browser.go(`${api}/security/csrf`)
  const login = await browser.login(api)
  return { status: login.status, eid: login.status === 200 ? decodeJwt((login.headers.get('authorization') ?? '').slice(7)).payload.eid : undefined }
}

test('ORCID preset: the ORCID iD (sub) is the persistent id, linked at the first login, and finds the eperson later without any e-mail', async (t) => {
  const orcid = '0000-0002-1825-0097'
  // AUTHN_OIDC_ISSUER points the preset at the test provider; ORCID's real one is https://orcid.org.
  const { test_, api, account } = await setup(t, { AUTHN_OIDC_PRESET: 'orcid', AUTHN_OIDC_SCOPES: 'openid email' })
  const olga = await addEperson(test_, 'olga@example.org')
  const signIn = () => signInThrough(api)
  // The first time, the iD is unknown: the (verified) e-mail finds Olga, and the iD is linked to her.
  account.current = { sub: orcid, email: 'olga@example.org' }
  assert.deepEqual(await signIn(), { status: 200, eid: olga.uuid })
  // ORCID-shaped from now on: no e-mail in any claim; the iD alone finds her.
  account.current = { sub: orcid }
  assert.deepEqual(await signIn(), { status: 200, eid: olga.uuid })
  // Another iD without an e-mail names nobody (and cannot be registered without one).
  account.current = { sub: '0000-0001-5109-3700' }
  assert.equal((await signIn()).status, 401)
})

test('ORCID preset with auto-registration: a record without a public e-mail is registered by its iD (an address under .invalid), found by the iD afterwards, never twice', async (t) => {
  const orcid = '0000-0001-5109-3700'
  const { test_, api, account } = await setup(t, { AUTHN_OIDC_PRESET: 'orcid', AUTHN_OIDC_SCOPES: 'openid email profile', AUTHN_OIDC_AUTO_REGISTER: 'true' })
  const { epersons } = await authnServices(test_)
  const signIn = () => signInThrough(api)
  account.current = { sub: orcid }
  const first = await signIn()
  assert.equal(first.status, 200)
  // 127.0.0.1 is the test provider's host; with the real preset the address is <iD>@orcid.org.invalid.
  const registered = await epersons.findByEmail(`${orcid}@127.0.0.1.invalid`)
  assert.equal(registered?.uuid, first.eid)
  assert.equal(registered?.first_name, 'Olga')
  assert.equal(registered?.last_name, 'Idp')
  assert.deepEqual(await signIn(), { status: 200, eid: first.eid })
  // Once the record makes its e-mail public, the iD still finds the same account: no second one.
  account.current = { sub: orcid, email: 'olga.public@example.org' }
  assert.deepEqual(await signIn(), { status: 200, eid: first.eid })
  assert.equal(await epersons.findByEmail('olga.public@example.org'), undefined)
})

test('an ORCID preset needs the client id and secret', async (t) => {
  await assert.rejects(startAuthn(t, { AUTHN_OIDC_PRESET: 'orcid' }), /AUTHN_OIDC_PRESET=orcid needs AUTHN_OIDC_CLIENT_ID/)
})
