import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startAuthn } from './helpers.ts'

test('every authn route is documented in the OpenAPI document under the authn tag', async (t) => {
  const { app } = await startAuthn(t)
  const response = await app.inject({ method: 'GET', url: '/docs/json' })
  assert.equal(response.statusCode, 200)
  const paths = Object.keys(response.json().paths)
  for (const path of [
    '/api/authn/login',
    '/api/authn/logout',
    '/api/authn/status',
    '/api/authn/shortlivedtokens',
    '/api/security/csrf',
    '/server/api/authn/status',
  ]) {
    assert.ok(paths.includes(path), `${path} documented`)
  }
  const login = response.json().paths['/api/authn/login'].post
  assert.deepEqual(login.tags, ['authn'])
  assert.ok(login.responses['401'])
})
