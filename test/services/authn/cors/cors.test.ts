import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, loggedIn, startAuthn } from '../helpers.ts'

test('CORS: allowed origins get credentials and the exposed headers; others are refused with 403, GET included', async (t) => {
  const { app } = await startAuthn(t, { AUTHN_ALLOWED_ORIGINS: 'https://ui.example.org, http://localhost:4000' })
  const allowed = await app.inject({ method: 'GET', url: '/server/api/authn/status', headers: { origin: 'https://ui.example.org' } })
  assert.equal(allowed.statusCode, 200)
  assert.equal(allowed.headers['access-control-allow-origin'], 'https://ui.example.org')
  assert.equal(allowed.headers['access-control-allow-credentials'], 'true')
  assert.equal(allowed.headers['access-control-expose-headers'], 'Authorization, DSPACE-XSRF-TOKEN, Location, WWW-Authenticate')
  assert.match(String(allowed.headers.vary), /Origin/)

  const foreign = await app.inject({ method: 'GET', url: '/server/api/authn/status', headers: { origin: 'https://untrusted.example' } })
  assert.equal(foreign.statusCode, 403)
  assert.equal(foreign.headers['access-control-allow-origin'], undefined)
  assert.equal(foreign.json().message, 'Invalid CORS request')

  // A bad origin is refused before CSRF and credentials are looked at.
  const client = await loggedIn(app, ADMIN_EMAIL)
  const login = await client.request('POST', 'authn/login', {
    form: { user: ADMIN_EMAIL, password: 'correct horse battery' },
    headers: { origin: 'https://untrusted.example' },
  })
  assert.equal(login.statusCode, 403)
  assert.equal(login.headers.authorization, undefined)

  // Same origin, and requests with no Origin (curl, server-side rendering), are fine.
  assert.equal((await app.inject({ method: 'GET', url: '/api/authn/status', headers: { origin: 'http://localhost:80' } })).statusCode, 200)
  assert.equal((await app.inject({ method: 'GET', url: '/api/authn/status' })).statusCode, 200)

  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/server/api/eperson/epersons/x',
    headers: { origin: 'http://localhost:4000', 'access-control-request-method': 'PATCH' },
  })
  assert.equal(preflight.statusCode, 204)
  assert.match(String(preflight.headers['access-control-allow-methods']), /PATCH/)
  assert.match(String(preflight.headers['access-control-allow-headers']), /X-On-Behalf-Of/)
})
