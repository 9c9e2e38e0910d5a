import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, BrowserClient, decodeJwt, loggedIn, startAuthn, statusOf } from '../helpers.ts'

test('refresh: the bearer alone gives a new token with a later exp and the same eid/sg; the old one lives only for the grace', async (t) => {
  const { app, clock } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const first = client.token ?? ''
  clock.advance(10 * 60_000)
  const response = await client.request('POST', 'authn/login')
  assert.equal(response.statusCode, 200)
  const second = client.token ?? ''
  assert.notEqual(second, first)
  const a = decodeJwt(first).payload
  const b = decodeJwt(second).payload
  assert.equal(b.eid, a.eid)
  assert.deepEqual(b.sg, a.sg)
  assert.equal(b.exp, Number(a.exp) + 600)
  assert.notEqual(b.jti, a.jti)

  clock.advance(59_000)
  assert.equal((await statusOf(app, first)).body.authenticated, true)
  clock.advance(1_000)
  assert.equal((await statusOf(app, first)).body.authenticated, false)
  assert.equal((await statusOf(app, second)).body.authenticated, true)
  // A superseded token past its grace cannot be refreshed either.
  const stale = await app.inject({
    method: 'POST',
    url: '/server/api/authn/login',
    headers: { authorization: `Bearer ${first}`, cookie: 'DSPACE-XSRF-COOKIE=x', 'x-xsrf-token': 'x' },
  })
  assert.equal(stale.statusCode, 401)
  assert.equal(stale.headers['www-authenticate'], 'password realm="DSpace REST API"')
})

test('two tabs refreshing the same token at once both end up with the one live token', async (t) => {
  const { app, clock } = await startAuthn(t)
  const tab = await loggedIn(app, ADMIN_EMAIL)
  const shared = tab.token ?? ''
  clock.advance(28 * 60_000)
  const refresh = () =>
    app.inject({
      method: 'POST',
      url: '/server/api/authn/login',
      headers: { authorization: `Bearer ${shared}`, cookie: 'DSPACE-XSRF-COOKIE=x', 'x-xsrf-token': 'x' },
    })
  const [one, two] = await Promise.all([refresh(), refresh()])
  assert.equal(one.statusCode, 200)
  assert.equal(two.statusCode, 200)
  assert.equal(one.headers.authorization, two.headers.authorization)
  // A third tab a little later, still within the grace, gets the same token too.
  clock.advance(30_000)
  const three = await refresh()
  assert.equal(three.headers.authorization, one.headers.authorization)
  clock.advance(60_000)
  const token = String(one.headers.authorization).slice('Bearer '.length)
  assert.equal((await statusOf(app, token)).body.authenticated, true)
  assert.equal((await statusOf(app, shared)).body.authenticated, false)
})

test('refreshes are capped by the absolute session lifetime', async (t) => {
  const { app, clock } = await startAuthn(t, { AUTHN_SESSION_MAX_AGE: '1h' })
  const client = await loggedIn(app, ADMIN_EMAIL)
  const start = Math.floor(clock.now().getTime() / 1000)
  for (let step = 0; step < 2; step++) {
    clock.advance(25 * 60_000)
    assert.equal((await client.request('POST', 'authn/login')).statusCode, 200)
  }
  assert.equal(decodeJwt(client.token ?? '').payload.exp, start + 3600)
  clock.advance(9 * 60_000)
  assert.equal((await statusOf(app, client.token)).body.authenticated, true)
  clock.advance(60_000)
  assert.equal((await statusOf(app, client.token)).body.authenticated, false)
  assert.equal((await client.request('POST', 'authn/login')).statusCode, 401)
})

test('refresh with an expired or garbage bearer → 401 with WWW-Authenticate; with credentials too → a new password login', async (t) => {
  const { app, clock } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const token = client.token
  client.token = 'abc.def.ghi'
  const garbage = await client.request('POST', 'authn/login')
  assert.equal(garbage.statusCode, 401)
  assert.ok(garbage.headers['www-authenticate'])
  client.token = token
  clock.advance(31 * 60_000)
  assert.equal((await client.request('POST', 'authn/login')).statusCode, 401)
  // Explicit credentials win over a token (DSpace would refresh the token's user instead).
  const relogin = await client.request('POST', 'authn/login', { form: { user: ADMIN_EMAIL, password: 'correct horse battery' } })
  assert.equal(relogin.statusCode, 200)
  assert.notEqual(client.token, token)
})

test('refresh through ?authentication-token= is refused with 403 and issues nothing', async (t) => {
  const { app } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const short = (await client.request('POST', 'authn/shortlivedtokens')).json().token
  const anonymous = new BrowserClient(app)
  await anonymous.request('GET', 'security/csrf')
  const response = await anonymous.request('POST', `authn/login?authentication-token=${short}`)
  assert.equal(response.statusCode, 403)
  assert.equal(response.headers.authorization, undefined)
})
