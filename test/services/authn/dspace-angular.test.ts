import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, PASSWORD, startAuthn } from './helpers.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read field by field in assertions.
type Json = any

const UI_ORIGIN = 'https://ui.example.org'

/**
 * What dspace-angular does against the REST API, over a real socket, from another origin:
 * every request withCredentials (the browser's cookie jar), DSPACE-XSRF-TOKEN read from every
 * response and error and sent back as X-XSRF-TOKEN on non-GET requests (xsrf.interceptor.ts),
 * the token taken from the Authorization response header and its `exp` decoded (auth.service.ts),
 * WWW-Authenticate parsed with the client's own regular expression (auth-methods).
 */
class AngularLikeClient {
  base: string
  jar = new Map<string, string>()
  xsrf: string | undefined
  accessToken: string | undefined
  expires = 0

  constructor(base: string) {
    this.base = base
  }

  async call(method: string, path: string, init: { body?: string; contentType?: string; auth?: boolean } = {}) {
    const headers: Record<string, string> = { origin: UI_ORIGIN, accept: 'application/json' }
    if (this.jar.size > 0) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ')
    if (method !== 'GET' && method !== 'HEAD' && this.xsrf) headers['x-xsrf-token'] = this.xsrf
    if (init.auth !== false && this.accessToken) headers.authorization = `Bearer ${this.accessToken}`
    if (init.contentType) headers['content-type'] = init.contentType
    const response = await fetch(`${this.base}${path}`, { method, headers, body: init.body, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const [name = '', ...rest] = pair.split('=')
      const value = rest.join('=')
      if (value) this.jar.set(name, value)
      else this.jar.delete(name)
    }
    // The interceptor reads the header from the exposed headers only, as a browser would let it.
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(',').map((item) => item.trim().toLowerCase())
    const xsrf = response.headers.get('dspace-xsrf-token')
    if (xsrf && exposed.includes('dspace-xsrf-token')) this.xsrf = xsrf
    const authorization = response.headers.get('authorization')
    if (authorization && exposed.includes('authorization')) {
      this.accessToken = authorization.replace('Bearer ', '')
      const payload = JSON.parse(Buffer.from(this.accessToken.split('.')[1] ?? '', 'base64url').toString())
      this.expires = payload.exp * 1000
    }
    return response
  }
}

test('the dspace-angular flow works unchanged from another origin: csrf, status, login, refresh, download token, logout', async (t) => {
  const { app, clock } = await startAuthn(t, { AUTHN_ALLOWED_ORIGINS: UI_ORIGIN })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new AngularLikeClient(`${address}/server/api`)

  // Preflight of the login POST.
  const preflight = await fetch(`${address}/server/api/authn/login`, {
    method: 'OPTIONS',
    headers: { origin: UI_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-xsrf-token,content-type' },
  })
  assert.equal(preflight.status, 204)
  assert.equal(preflight.headers.get('access-control-allow-origin'), UI_ORIGIN)
  assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true')
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-XSRF-TOKEN/)

  // browser-xsrf.service: one GET /security/csrf at start.
  assert.equal((await client.call('GET', '/security/csrf')).status, 204)
  assert.ok(client.xsrf)
  assert.equal(client.jar.get('DSPACE-XSRF-COOKIE'), client.xsrf)

  // The login page: status, and the methods from WWW-Authenticate.
  const anonymous = await client.call('GET', '/authn/status')
  assert.equal(((await anonymous.json()) as Json).authenticated, false)
  const challenge = anonymous.headers.get('www-authenticate') ?? ''
  const methods = [...challenge.matchAll(/(\w+ (\w+=((".*?")|[^,]*)(, )?)*)/g)].map((match) => match[0].split(' ')[0])
  assert.deepEqual(methods, ['password'])

  const login = await client.call('POST', '/authn/login', {
    body: new URLSearchParams({ user: ADMIN_EMAIL, password: PASSWORD }).toString(),
    contentType: 'application/x-www-form-urlencoded',
    auth: false,
  })
  assert.equal(login.status, 200)
  assert.ok(client.accessToken)
  assert.equal(client.expires, clock.now().getTime() + 30 * 60_000)

  const status = await client.call('GET', '/authn/status?embed=specialGroups')
  const body = (await status.json()) as Json
  assert.equal(body.authenticated, true)
  assert.equal(status.headers.get('content-type'), 'application/hal+json;charset=UTF-8')
  const eperson = await client.call('GET', new URL(body._links.eperson.href).pathname.replace('/server/api', ''))
  assert.equal(((await eperson.json()) as Json).email, ADMIN_EMAIL)

  // The refresh timer fires when less than 2 minutes are left.
  clock.advance(29 * 60_000)
  const before = client.accessToken
  const refresh = await client.call('POST', '/authn/login')
  assert.equal(refresh.status, 200)
  assert.notEqual(client.accessToken, before)
  assert.ok(client.expires > clock.now().getTime() + 29 * 60_000)

  // A file link: a short-lived token appended to a GET.
  const short = await client.call('POST', '/authn/shortlivedtokens')
  assert.equal(short.status, 200)
  const { token } = (await short.json()) as Json
  const download = await fetch(`${address}/server/api/authn/status?authentication-token=${token}`, { headers: { origin: UI_ORIGIN } })
  assert.equal(((await download.json()) as Json).authenticated, true)

  const logout = await client.call('POST', '/authn/logout')
  assert.equal(logout.status, 204)
  const after = await client.call('GET', '/authn/status')
  assert.equal(((await after.json()) as Json).authenticated, false)

  // A page from an origin that is not allowed is refused outright.
  const foreign = await fetch(`${address}/server/api/authn/status`, { headers: { origin: 'https://untrusted.example' } })
  assert.equal(foreign.status, 403)
})
