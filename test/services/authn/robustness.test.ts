import assert from 'node:assert/strict'
import type { InjectOptions } from 'fastify'
import { test } from 'node:test'
import { ADMIN_EMAIL, loggedIn, startAuthn } from './helpers.ts'

test('bad input never gives a 500 and always the DSpace error body', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true', AUTHN_IP_GROUPS: 'Campus=10.0.0.0/8', AUTHN_TRUSTED_PROXIES: '127.0.0.1' })
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const csrf = { cookie: 'DSPACE-XSRF-COOKIE=x', 'x-xsrf-token': 'x' }
  const requests: InjectOptions[] = [
    { method: 'GET', url: '/api/authn/status', headers: { cookie: '%%%; ===; DSPACE-XSRF-COOKIE' } },
    { method: 'GET', url: '/api/authn/status', headers: { authorization: 'Bearer' } },
    { method: 'GET', url: '/api/authn/status', headers: { authorization: `Bearer ${'a'.repeat(20_000)}` } },
    { method: 'GET', url: '/api/authn/status', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
    { method: 'GET', url: '/api/authn/status', headers: { 'x-forwarded-for': ',,,::::,999.1.1.1' } },
    { method: 'GET', url: '/api/authn/status?authentication-token=&authentication-token=x' },
    { method: 'GET', url: '/api/authn/status?embed=' },
    { method: 'GET', url: '/api/authn/status?projection=full&projection=full' },
    { method: 'POST', url: '/api/authn/login', headers: { ...csrf, 'content-type': 'application/json' }, payload: '{bad json' },
    { method: 'POST', url: '/api/authn/login', headers: { ...csrf, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'user[a]=b&password[]=c' },
    { method: 'POST', url: '/api/authn/login', headers: { ...csrf, 'content-type': 'text/plain' }, payload: 'hello' },
    {
      method: 'POST',
      url: '/api/eperson/epersons',
      headers: { ...csrf, authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
      payload: '[]',
    },
    {
      method: 'PATCH',
      url: '/api/eperson/epersons/00000000-0000-4000-8000-000000000000',
      headers: { ...csrf, authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
      payload: '{}',
    },
    { method: 'GET', url: '/api/authn/status', headers: { authorization: `Bearer ${admin.token}`, 'x-on-behalf-of': '' } },
    { method: 'GET', url: '/api/authz/authorizations/search/object?uri=%%%&feature=loginOnBehalfOf', headers: { authorization: `Bearer ${admin.token}` } },
    { method: 'GET', url: '/api/authn/oidc' },
  ]
  for (const request of requests) {
    const response = await test_.app.inject(request)
    assert.ok(response.statusCode < 500, `${request.method} ${request.url}: ${response.statusCode} ${response.body}`)
    if (response.statusCode >= 400) {
      assert.deepEqual(Object.keys(response.json()).sort(), ['error', 'message', 'path', 'status', 'timestamp'], `${request.method} ${request.url}`)
    }
  }
})
