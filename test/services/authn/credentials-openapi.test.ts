import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startAuthn } from './helpers.ts'

test('the OpenAPI document describes the session, personal access token and passkey routes', async (t) => {
  const { app } = await startAuthn(t, { AUTHN_PASSKEY_RP_ID: 'repo.example.org' })
  const paths = (await app.inject({ method: 'GET', url: '/docs/json' })).json().paths
  const expected: Record<string, string[]> = {
    '/api/authn/sessions': ['get'],
    '/api/authn/sessions/{id}': ['get', 'delete'],
    '/api/authn/tokens': ['get', 'post'],
    '/api/authn/tokens/{id}': ['get', 'delete'],
    '/api/authn/passkeys': ['get', 'post'],
    '/api/authn/passkeys/{id}': ['delete'],
    '/api/authn/passkeys/registration/options': ['post'],
    '/api/authn/passkeys/login/options': ['post'],
    '/api/authn/passkeys/login': ['post'],
  }
  for (const [path, methods] of Object.entries(expected)) {
    for (const prefix of ['', '/server']) {
      for (const method of methods) {
        const operation = paths[`${prefix}${path}`]?.[method]
        assert.ok(operation, `${method} ${prefix}${path} documented`)
        assert.deepEqual(operation.tags, ['authn'])
        assert.ok(operation.summary)
        assert.ok(operation.responses['401'] || path.startsWith('/api/authn/passkeys/login'), `${method} ${path} documents its 401`)
      }
    }
  }
})
