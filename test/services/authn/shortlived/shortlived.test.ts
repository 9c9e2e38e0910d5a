import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, addEperson, BrowserClient, decodeJwt, loggedIn, startAuthn, statusOf } from '../helpers.ts'

test('POST /authn/shortlivedtokens → 200 {token, type, _links.self}; lives at most 2 s; no CSRF rotation', async (t) => {
  const { app, clock } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const response = await client.request('POST', 'authn/shortlivedtokens')
  assert.equal(response.statusCode, 200)
  const body = response.json()
  assert.equal(body.type, 'shortlivedtoken')
  assert.equal(body._links.self.href, 'http://localhost:80/server/api/authn/shortlivedtokens')
  assert.equal(response.headers['dspace-xsrf-token'], undefined)
  assert.equal(response.headers['set-cookie'], undefined)
  const { payload } = decodeJwt(body.token)
  assert.ok(Number(payload.exp) - Number(payload.iat) <= 2)
  assert.equal(payload.eid, decodeJwt(client.token ?? '').payload.eid)

  const download = await app.inject({ method: 'GET', url: `/server/api/authn/status?authentication-token=${body.token}` })
  assert.equal(download.json().authenticated, true)
  assert.equal((await statusOf(app, client.token)).body.authenticated, true)
  clock.advance(2_000)
  const late = await app.inject({ method: 'GET', url: `/server/api/authn/status?authentication-token=${body.token}` })
  assert.equal(late.statusCode, 200)
  assert.equal(late.json().authenticated, false)
})

test('anonymous → 401 with WWW-Authenticate; GET → 405; a short-lived token cannot mint another (403)', async (t) => {
  const { app } = await startAuthn(t)
  const anonymous = new BrowserClient(app)
  await anonymous.request('GET', 'security/csrf')
  const refused = await anonymous.request('POST', 'authn/shortlivedtokens')
  assert.equal(refused.statusCode, 401)
  assert.equal(refused.headers['www-authenticate'], 'password realm="DSpace REST API"')
  const client = await loggedIn(app, ADMIN_EMAIL)
  assert.equal((await client.request('GET', 'authn/shortlivedtokens')).statusCode, 405)
  const token = (await client.request('POST', 'authn/shortlivedtokens')).json().token
  const again = await anonymous.request('POST', `authn/shortlivedtokens?authentication-token=${token}`)
  assert.equal(again.statusCode, 403)
  assert.equal(again.json().token, undefined)
})

test('?authentication-token= authenticates GETs only; a login token there is anonymous; mutating requests refuse it', async (t) => {
  const test_ = await startAuthn(t)
  const alice = await addEperson(test_, 'alice@example.org')
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const short = (await admin.request('POST', 'authn/shortlivedtokens')).json().token
  const asLogin = await test_.app.inject({ method: 'GET', url: `/api/authn/status?authentication-token=${admin.token}` })
  assert.equal(asLogin.json().authenticated, false)
  const read = await test_.app.inject({ method: 'GET', url: `/api/eperson/epersons/${alice.uuid}?authentication-token=${short}` })
  assert.equal(read.statusCode, 200)
  const anonymous = new BrowserClient(test_.app, '/api')
  await anonymous.request('GET', 'security/csrf')
  const write = await anonymous.request('PATCH', `eperson/epersons/${alice.uuid}?authentication-token=${short}`, {
    json: [{ op: 'replace', path: '/canLogIn', value: false }],
  })
  assert.equal(write.statusCode, 403)
  const stillEnabled = await admin.request('GET', `eperson/epersons/${alice.uuid}`)
  assert.equal(stillEnabled.json().canLogIn, true)
})

test('the request log never shows a short-lived token: the query value is redacted', async () => {
  const { redactUrl } = await import('../../../../src/core/http/logger.ts')
  const logged = redactUrl('/server/api/core/bitstreams/x/content?authentication-token=eyJhbGciOiJIUzI1NiJ9.e30.sig&download=1')
  assert.doesNotMatch(logged, /eyJ/)
  assert.match(logged, /authentication-token=%5Bredacted%5D|authentication-token=\[redacted\]/)
})
