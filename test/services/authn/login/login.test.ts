import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, addEperson, BrowserClient, decodeJwt, loggedIn, PASSWORD, startAuthn, statusOf } from '../helpers.ts'

const CHALLENGE = 'password realm="DSpace REST API"'

test('password login: 200, empty body, Authorization: Bearer <HS256 JWT> with eid, sg, authenticationMethod, iat, exp (+30 min), jti', async (t) => {
  const test_ = await startAuthn(t)
  const alice = await addEperson(test_, 'alice@example.org')
  const client = new BrowserClient(test_.app)
  const response = await client.login('alice@example.org')
  assert.equal(response.statusCode, 200)
  assert.equal(response.body, '')
  const { header, payload } = decodeJwt(client.token ?? '')
  // DSpace's header plus the id of the signing key (key rotation, docs/decisions.md).
  assert.deepEqual(Object.keys(header), ['alg', 'kid'])
  assert.equal(header.alg, 'HS256')
  assert.match(String(header.kid), /^[0-9a-f]{16}$/)
  const now = Math.floor(test_.clock.now().getTime() / 1000)
  assert.equal(payload.eid, alice.uuid)
  assert.deepEqual(payload.sg, [])
  assert.equal(payload.authenticationMethod, 'password')
  assert.equal(payload.iat, now)
  assert.equal(payload.exp, now + 1800)
  assert.match(String(payload.jti), /^[0-9a-f-]{36}$/)
  assert.equal((await statusOf(test_.app, client.token)).body.authenticated, true)
})

test('e-mail is matched case-insensitively; AUTHN_TOKEN_LIFETIME sets the lifetime; the token dies at exp', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_TOKEN_LIFETIME: '5m' })
  await addEperson(test_, 'alice@example.org')
  const client = new BrowserClient(test_.app)
  assert.equal((await client.login('ALICE@Example.ORG')).statusCode, 200)
  const { payload } = decodeJwt(client.token ?? '')
  assert.equal(Number(payload.exp) - Number(payload.iat), 300)
  test_.clock.advance(299_000)
  assert.equal((await statusOf(test_.app, client.token)).body.authenticated, true)
  test_.clock.advance(1_000)
  assert.equal((await statusOf(test_.app, client.token)).body.authenticated, false)
})

test('every login failure is the same 401 with WWW-Authenticate: wrong password, unknown user, disabled account, nothing sent', async (t) => {
  const test_ = await startAuthn(t)
  await addEperson(test_, 'alice@example.org')
  await addEperson(test_, 'off@example.org', { canLogIn: false })
  const attempts: Array<Record<string, string> | undefined> = [
    { user: 'alice@example.org', password: 'wrong password' },
    { user: 'nobody@example.org', password: PASSWORD },
    { user: 'off@example.org', password: PASSWORD },
    { user: 'alice@example.org' },
    {},
    undefined,
  ]
  const seen = new Set<string>()
  for (const form of attempts) {
    const client = new BrowserClient(test_.app)
    await client.request('GET', 'security/csrf')
    const response = await client.request('POST', 'authn/login', { form })
    assert.equal(response.statusCode, 401, JSON.stringify(form))
    assert.equal(response.headers['www-authenticate'], CHALLENGE)
    assert.equal(response.headers.authorization, undefined)
    const { timestamp: _timestamp, ...body } = response.json()
    assert.deepEqual(body, { status: 401, error: 'Unauthorized', message: 'Authentication failed!', path: '/server/api/authn/login' })
    // No CSRF rotation on failure: the pair in hand stays good.
    assert.equal(response.headers['dspace-xsrf-token'], undefined)
    seen.add(JSON.stringify([response.statusCode, response.headers['www-authenticate'], response.headers['content-type'], body]))
  }
  assert.equal(seen.size, 1)
})

test('credentials are accepted from a form body only: query string → 400, JSON → 415', async (t) => {
  const test_ = await startAuthn(t)
  const client = new BrowserClient(test_.app)
  await client.request('GET', 'security/csrf')
  const inQuery = await client.request('POST', `authn/login?user=${encodeURIComponent(ADMIN_EMAIL)}&password=${encodeURIComponent(PASSWORD)}`)
  assert.equal(inQuery.statusCode, 400)
  assert.equal(inQuery.headers.authorization, undefined)
  const asJson = await client.request('POST', 'authn/login', { json: { user: ADMIN_EMAIL, password: PASSWORD } })
  assert.equal(asJson.statusCode, 415)
  assert.equal(asJson.headers.authorization, undefined)
})

test('GET/PUT/PATCH/DELETE /authn/login → 405 "Only POST is allowed for login requests." and no token', async (t) => {
  const test_ = await startAuthn(t)
  const client = new BrowserClient(test_.app)
  await client.request('GET', 'security/csrf')
  const get = await client.request('GET', `authn/login?user=${encodeURIComponent(ADMIN_EMAIL)}&password=${encodeURIComponent(PASSWORD)}`)
  assert.equal(get.statusCode, 405)
  assert.equal(get.json().message, 'Only POST is allowed for login requests.')
  assert.equal(get.headers.authorization, undefined)
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    const response = await client.request(method, 'authn/login', { form: { user: ADMIN_EMAIL, password: PASSWORD } })
    assert.equal(response.statusCode, 405, method)
    assert.equal(response.headers.allow, 'POST')
  }
})

test('the same endpoints answer under /api and /server/api', async (t) => {
  const test_ = await startAuthn(t)
  const short = await loggedIn(test_.app, ADMIN_EMAIL, PASSWORD, '/api')
  const status = await short.request('GET', 'authn/status')
  assert.equal(status.json().authenticated, true)
  assert.match(status.json()._links.self.href, /\/api\/authn\/status$/)
  assert.doesNotMatch(status.json()._links.self.href, /\/server\//)
})
