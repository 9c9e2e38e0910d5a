import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, BrowserClient, loggedIn, startAuthn, statusOf } from '../helpers.ts'

function cookiesOf(headers: Record<string, unknown>): string[] {
  const raw = headers['set-cookie']
  return raw === undefined ? [] : Array.isArray(raw) ? (raw as string[]) : [raw as string]
}

test('any request without the CSRF cookie gets a token: header and one HttpOnly SameSite=Lax cookie with the same value', async (t) => {
  const { app } = await startAuthn(t)
  for (const [url, path] of [
    ['/server/api/authn/status', '/server'],
    ['/api/authn/status', '/'],
  ] as const) {
    const response = await app.inject({ method: 'GET', url })
    const token = response.headers['dspace-xsrf-token']
    assert.match(String(token), /^[0-9a-f-]{36}$/)
    const cookies = cookiesOf(response.headers)
    assert.equal(cookies.length, 1)
    assert.equal(cookies[0], `DSPACE-XSRF-COOKIE=${token}; Path=${path}; HttpOnly; SameSite=Lax`)
  }
  // With the cookie present, plain GETs carry neither.
  const withCookie = await app.inject({ method: 'GET', url: '/api/authn/status', headers: { cookie: 'DSPACE-XSRF-COOKIE=abc' } })
  assert.equal(withCookie.headers['dspace-xsrf-token'], undefined)
  assert.equal(withCookie.headers['set-cookie'], undefined)
})

test('over https the cookie is SameSite=None; Secure', async (t) => {
  const { app } = await startAuthn(t, { TRUST_PROXY: '127.0.0.1' })
  const response = await app.inject({ method: 'GET', url: '/api/security/csrf', headers: { 'x-forwarded-proto': 'https' } })
  assert.match(cookiesOf(response.headers)[0] ?? '', /; Path=\/; HttpOnly; Secure; SameSite=None$/)
  // X-Forwarded-Proto counts only from a trusted proxy.
  const { app: untrusted } = await startAuthn(t)
  const plain = await untrusted.inject({ method: 'GET', url: '/api/security/csrf', headers: { 'x-forwarded-proto': 'https' } })
  assert.match(cookiesOf(plain.headers)[0] ?? '', /SameSite=Lax$/)
})

test('GET /security/csrf answers 204 with a new token each time, even with a cookie', async (t) => {
  const { app } = await startAuthn(t)
  const first = await app.inject({ method: 'GET', url: '/server/api/security/csrf' })
  const second = await app.inject({
    method: 'GET',
    url: '/server/api/security/csrf',
    headers: { cookie: `DSPACE-XSRF-COOKIE=${first.headers['dspace-xsrf-token']}` },
  })
  assert.equal(first.statusCode, 204)
  assert.equal(second.statusCode, 204)
  assert.notEqual(first.headers['dspace-xsrf-token'], second.headers['dspace-xsrf-token'])
  assert.equal(cookiesOf(second.headers).length, 1)
})

test('POST/PUT/PATCH/DELETE without a matching pair → 403 "Access is denied. Invalid CSRF token." with a fresh pair', async (t) => {
  const { app } = await startAuthn(t)
  const cases = [
    { headers: {} },
    { headers: { 'x-xsrf-token': 'abc' } },
    { headers: { cookie: 'DSPACE-XSRF-COOKIE=abc' } },
    { headers: { cookie: 'DSPACE-XSRF-COOKIE=abc', 'x-xsrf-token': 'abd' } },
  ]
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    for (const { headers } of cases) {
      const response = await app.inject({ method, url: '/server/api/authn/login', headers })
      assert.equal(response.statusCode, 403, `${method} ${JSON.stringify(headers)}`)
      const body = response.json()
      assert.equal(body.message, 'Access is denied. Invalid CSRF token.')
      assert.equal(body.status, 403)
      assert.equal(body.error, 'Forbidden')
      assert.equal(body.path, '/server/api/authn/login')
      assert.ok(body.timestamp)
      assert.match(String(response.headers['dspace-xsrf-token']), /^[0-9a-f-]{36}$/)
      assert.equal(cookiesOf(response.headers).length, 1)
    }
  }
  // With a matching pair the request goes through to the route (405 here, no new token).
  const ok = await app.inject({ method: 'PUT', url: '/server/api/authn/login', headers: { cookie: 'DSPACE-XSRF-COOKIE=abc', 'x-xsrf-token': 'abc' } })
  assert.equal(ok.statusCode, 405)
  assert.equal(ok.headers['dspace-xsrf-token'], undefined)
})

test('a CSRF failure on logout leaves the token valid; login, refresh and logout rotate the pair', async (t) => {
  const { app } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const bad = await app.inject({ method: 'POST', url: '/server/api/authn/logout', headers: { authorization: `Bearer ${client.token}` } })
  assert.equal(bad.statusCode, 403)
  assert.equal((await statusOf(app, client.token)).body.authenticated, true)

  let before = client.xsrf
  const refresh = await client.request('POST', 'authn/login')
  assert.equal(refresh.statusCode, 200)
  assert.notEqual(client.xsrf, before)
  assert.equal(cookiesOf(refresh.headers).length, 1)

  before = client.xsrf
  const logout = await client.request('POST', 'authn/logout')
  assert.equal(logout.statusCode, 204)
  assert.notEqual(client.xsrf, before)

  before = client.xsrf
  const login = await client.login(ADMIN_EMAIL)
  assert.equal(login.statusCode, 200)
  assert.notEqual(client.xsrf, before)
})

test('the cookie prefix is configurable; the header names are not', async (t) => {
  const { app } = await startAuthn(t, { AUTHN_CSRF_COOKIE_PREFIX: 'TRIAD' })
  const response = await app.inject({ method: 'GET', url: '/api/security/csrf' })
  assert.match(cookiesOf(response.headers)[0] ?? '', /^TRIAD-XSRF-COOKIE=/)
  const client = new BrowserClient(app)
  assert.equal((await client.login(ADMIN_EMAIL)).statusCode, 200)
})
