import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { ManualClock } from '../../../../src/core/clock.ts'
import type { Cleanup } from '../../../helpers/build-app.ts'
import { chromiumSkipReason, launchChromium } from '../../../helpers/browser.ts'
import { freePort } from '../../../helpers/free-port.ts'
import { addEperson, startAuthn } from '../helpers.ts'
import { type IdpUser, type SimpleSamlPhp, simpleSamlPhpSkipReason, startSimpleSamlPhp } from './simplesamlphp.ts'

/**
 * The whole SAML sign-on against a real identity provider: Debian's simplesamlphp, driven by
 * Chromium from a page that does what dspace-angular does. Nothing is faked between the page,
 * Triad and the IdP: the AuthnRequest, the login form, the signed and encrypted response posted
 * by the IdP's own page, the hand-off cookie and POST /authn/login all go over real sockets.
 */

const OLGA: IdpUser = {
  username: 'olga',
  password: 'olga-password-1',
  attributes: { eduPersonPrincipalName: 'olga@uni.example.edu', mail: 'olga@example.edu', givenName: 'Olga', sn: 'Nowak', eduPersonAffiliation: ['member', 'staff'] },
}
const PIOTR: IdpUser = {
  username: 'piotr',
  password: 'piotr-password-2',
  attributes: { eduPersonPrincipalName: 'piotr@uni.example.edu', mail: 'piotr@example.edu', givenName: 'Piotr', sn: 'Zieliński', eduPersonAffiliation: ['member', 'student'] },
}

let browser: Browser | undefined
const skipReason = chromiumSkipReason() || simpleSamlPhpSkipReason()

before(async () => {
  if (!skipReason) browser = await launchChromium()
})
after(() => browser?.close())

/** A clock that follows real time: the IdP stamps its assertions with its own (real) clock. */
function realTimeClock(): ManualClock {
  let offset = 0
  return {
    now: () => new Date(Date.now() + offset),
    set: (at) => {
      offset = new Date(at).getTime() - Date.now()
    },
    advance: (ms) => {
      offset += ms
    },
  }
}

/** The provider as a university would configure it: the IdP's metadata URL, unscoped eduPersonAffiliation, groups by affiliation. */
function providers(idp: SimpleSamlPhp, extra: Record<string, unknown> = {}): string {
  return JSON.stringify([
    {
      id: 'uni',
      name: 'Example University',
      metadata: idp.metadataUrl,
      allowHttp: true,
      autoRegister: true,
      groups: ['Federated'],
      attributes: { affiliation: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.1' },
      attributeGroups: [
        { attribute: 'affiliation', value: 'staff', group: 'Staff' },
        { attribute: 'affiliation', value: 'student', group: 'Students' },
      ],
      ...extra,
    },
  ])
}

async function listen(t: Cleanup, server: Server, port = 0): Promise<string> {
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    // The browser keeps its connections alive; the page server must not wait for them.
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * The repository's UI, as dspace-angular behaves: every call with credentials, the CSRF token
 * read from DSPACE-XSRF-TOKEN and sent back as X-XSRF-TOKEN, the login methods parsed from
 * WWW-Authenticate with dspace-angular's own expression, an external method opened at
 * `location?redirectUrl=<this page>`, and, back on the page, POST /authn/login with no
 * credentials (the hand-off cookie), then the status with the special groups.
 */
async function startUi(t: Cleanup, port: number, api: string): Promise<string> {
  const script = `
    const api = ${JSON.stringify(api)}
    let xsrf, token
    async function call(method, path) {
      const headers = {}
      if (method !== 'GET' && xsrf) headers['X-XSRF-TOKEN'] = xsrf
      if (token) headers.Authorization = 'Bearer ' + token
      const response = await fetch(api + path, { method, headers, credentials: 'include' })
      xsrf = response.headers.get('DSPACE-XSRF-TOKEN') ?? xsrf
      const authorization = response.headers.get('Authorization')
      if (authorization) token = authorization.slice('Bearer '.length)
      return response
    }
    function authMethods(header) {
      return [...header.matchAll(/(\\w+ (\\w+=((".*?")|[^,]*)(, )?)*)/g)].map(([entry]) => ({
        type: entry.split(' ')[0],
        location: /location="([^"]*)"/.exec(entry)?.[1],
      }))
    }
    if (new URLSearchParams(location.search).has('returned')) {
      await call('GET', '/security/csrf')
      const login = await call('POST', '/authn/login')
      const status = await (await call('GET', '/authn/status?embed=eperson&embed=specialGroups')).json()
      window.outcome = { login: login.status, status }
    } else {
      const anonymous = await call('GET', '/authn/status')
      for (const method of authMethods(anonymous.headers.get('WWW-Authenticate') ?? '')) {
        const button = document.body.appendChild(document.createElement('button'))
        button.textContent = method.type
        button.onclick = () => { window.location.href = method.location + '?redirectUrl=' + encodeURIComponent(location.origin + '/?returned=1') }
      }
      window.ready = true
    }
  `
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>repository</title><script type="module">${script}</script>`)
  })
  return listen(t, server, port)
}

/**
 * Starts the sign-on on the UI page and logs in at simplesamlphp's own form as `user`; the
 * page's outcome once it is back, and the SAML messages the browser carried (decoded).
 */
async function signOn(page: Page, ui: string, idp: SimpleSamlPhp, user: IdpUser) {
  const carried = { authnRequests: [] as Array<{ binding: 'redirect' | 'post'; url: string }>, responses: [] as string[] }
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.origin !== idp.base && request.method() === 'POST' && url.pathname.includes('/server/saml2/assertion-consumer/')) {
      carried.responses.push(Buffer.from(new URLSearchParams(request.postData() ?? '').get('SAMLResponse') ?? '', 'base64').toString('utf8'))
    }
    if (url.origin === idp.base && url.pathname === '/saml2/idp/SSOService.php') {
      carried.authnRequests.push({ binding: request.method() === 'POST' ? 'post' : 'redirect', url: request.url() })
    }
  })
  await page.goto(ui)
  await page.waitForFunction(() => (globalThis as { ready?: boolean }).ready === true)
  await page.getByRole('button', { name: 'saml' }).click()
  await page.waitForURL((url) => url.origin === idp.base)
  await page.locator('input[name="username"]').fill(user.username)
  await page.locator('input[name="password"]').fill(user.password)
  await page.locator('input[name="password"]').press('Enter')
  // The IdP's page posts the response to the assertion consumer, which sends the browser back.
  await page.waitForFunction(() => (globalThis as { outcome?: unknown }).outcome !== undefined, undefined, { timeout: 60_000 }).catch((error: unknown) => {
    throw new Error(`the sign-on did not come back to the UI (now at ${page.url()}); simplesamlphp said: ${idp.log()}`, { cause: error })
  })
  return { outcome: await page.evaluate(() => (globalThis as unknown as { outcome: Outcome }).outcome), carried }
}

interface Outcome {
  login: number
  status: {
    authenticated: boolean
    authenticationMethod: string
    _embedded: { eperson: { email: string; firstName?: string }; specialGroups: { _embedded: { specialGroups: Array<{ name: string }> } } }
  }
}

const groupNames = (outcome: Outcome) => outcome.status._embedded.specialGroups._embedded.specialGroups.map((group) => group.name).sort()

/** Triad on a port chosen first, so that its public origin (AUTHN_SAML_BASE_URL) is known before it starts. */
async function startTriad(t: Cleanup, idp: SimpleSamlPhp, ui: string, extra: Record<string, unknown> = {}) {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const test_ = await startAuthn(
    t,
    { AUTHN_ALLOWED_ORIGINS: ui, AUTHN_SAML_BASE_URL: base, AUTHN_SAML_PROVIDERS: providers(idp, extra) },
    { clock: realTimeClock() },
  )
  await test_.app.listen({ port, host: '127.0.0.1' })
  return { test: test_, base }
}

/** The IdP administrator's step: Triad's SP metadata, fetched from its URL, registered at the IdP. */
async function register(idp: SimpleSamlPhp, base: string): Promise<void> {
  const response = await fetch(`${base}/server/saml2/service-provider-metadata/uni`)
  assert.equal(response.status, 200)
  idp.registerServiceProvider(await response.text())
}

test('a real IdP (simplesamlphp): the dspace-angular page signs a known person on through it, with the special groups of her affiliation', async (t) => {
  if (!browser) return t.skip(String(skipReason))
  const idp = await startSimpleSamlPhp(t, [OLGA, PIOTR])
  const uiPort = await freePort()
  const ui = `http://127.0.0.1:${uiPort}`
  const triad = await startTriad(t, idp, ui)
  await startUi(t, uiPort, `${triad.base}/server/api`)
  await register(idp, triad.base)
  await addEperson(triad.test, OLGA.attributes.mail)

  const context = await browser.newContext()
  t.after(() => context.close())
  const { outcome, carried } = await signOn(await context.newPage(), ui, idp, OLGA)
  assert.equal(carried.authnRequests[0]?.binding, 'redirect')
  assert.ok(new URL(carried.authnRequests[0]?.url ?? '').searchParams.get('Signature'), 'the AuthnRequest is signed')
  // simplesamlphp encrypted the assertion to the certificate in Triad's metadata; Triad decrypted it.
  assert.equal(carried.responses.length, 1)
  assert.match(carried.responses[0] ?? '', /<saml:EncryptedAssertion>/)
  assert.doesNotMatch(carried.responses[0] ?? '', /olga@example\.edu/)
  assert.equal(outcome.login, 200)
  assert.equal(outcome.status.authenticated, true)
  assert.equal(outcome.status.authenticationMethod, 'saml')
  assert.equal(outcome.status._embedded.eperson.email, OLGA.attributes.mail)
  assert.deepEqual(groupNames(outcome), ['Federated', 'Staff'])
})

/**
 * One public origin in front of two instances, as a load balancer with path rules: the start of
 * a sign-on goes to A, everything else (the assertion consumer, the API) to B. It records which
 * instance answered what.
 */
async function startSplitter(t: Cleanup): Promise<{ base: string; route(upstreams: { a: string; b: string }): void; served: Array<{ instance: 'a' | 'b'; method: string; path: string }> }> {
  const served: Array<{ instance: 'a' | 'b'; method: string; path: string }> = []
  let upstreams: { a: string; b: string } | undefined
  const server = createServer((incoming, outgoing) => {
    const path = incoming.url ?? '/'
    const instance = path.startsWith('/server/saml2/authenticate/') ? 'a' : 'b'
    served.push({ instance, method: incoming.method ?? 'GET', path: path.split('?')[0] ?? path })
    const target = new URL(upstreams?.[instance] ?? 'http://127.0.0.1:9')
    const forward = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    forward.on('error', () => outgoing.writeHead(502).end())
    incoming.pipe(forward)
  })
  const base = await listen(t, server)
  return { base, served, route: (given) => (upstreams = given) }
}

test('a real IdP, two instances behind one entity id: the request started on A (HTTP-POST binding) is consumed on B, and an unknown person is registered with the groups of his affiliation', async (t) => {
  if (!browser) return t.skip(String(skipReason))
  const idp = await startSimpleSamlPhp(t, [OLGA, PIOTR])
  const uiPort = await freePort()
  const ui = `http://127.0.0.1:${uiPort}`
  const splitter = await startSplitter(t)
  const env = { AUTHN_ALLOWED_ORIGINS: ui, AUTHN_SAML_BASE_URL: splitter.base, AUTHN_SAML_PROVIDERS: providers(idp, { authnRequestBinding: 'HTTP-POST' }) }
  const a = await startAuthn(t, env, { clock: realTimeClock() })
  const b = await startAuthn(t, env, { database: a.database, clock: a.clock, secretStore: a.secretStore })
  splitter.route({ a: await a.app.listen({ port: 0, host: '127.0.0.1' }), b: await b.app.listen({ port: 0, host: '127.0.0.1' }) })
  await startUi(t, uiPort, `${splitter.base}/server/api`)
  await register(idp, splitter.base)

  const context = await browser.newContext()
  t.after(() => context.close())
  const { outcome, carried } = await signOn(await context.newPage(), ui, idp, PIOTR)
  assert.equal(carried.authnRequests[0]?.binding, 'post')
  assert.deepEqual(
    splitter.served.filter((entry) => entry.path.startsWith('/server/saml2/a')).map(({ instance, method, path }) => `${instance} ${method} ${path}`),
    ['a GET /server/saml2/authenticate/uni', 'b POST /server/saml2/assertion-consumer/uni'],
  )
  assert.equal(outcome.login, 200)
  assert.equal(outcome.status.authenticationMethod, 'saml')
  assert.equal(outcome.status._embedded.eperson.email, PIOTR.attributes.mail)
  assert.deepEqual(groupNames(outcome), ['Federated', 'Students'])
  // Registered from the assertion, and linked to his eduPersonTargetedID for the next login.
  const eperson = await a.database.db.selectFrom('authn_epersons' as never).select(['first_name' as never, 'last_name' as never]).where('email' as never, '=', PIOTR.attributes.mail as never).executeTakeFirst()
  assert.deepEqual(eperson, { first_name: 'Piotr', last_name: 'Zieliński' })
  const identities = await a.database.db.selectFrom('authn_saml_identities' as never).select(['provider_id' as never]).execute()
  assert.deepEqual(identities, [{ provider_id: 'uni' }])
})
