import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTestDatabase } from '../../../helpers/build-app.ts'
import { ADMIN_EMAIL, loggedIn, startAuthn, statusOf } from '../helpers.ts'

test('logout on one instance reaches another within AUTHN_REVOCATION_CACHE, and at once on the same instance', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '2s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '2s' }, { database, clock: a.clock })
  const laptop = await loggedIn(a.app, ADMIN_EMAIL)
  const phone = await loggedIn(b.app, ADMIN_EMAIL)
  // Both instances have the sessions in their caches.
  for (const app of [a.app, b.app]) for (const token of [laptop.token, phone.token]) assert.equal((await statusOf(app, token)).body.authenticated, true)

  assert.equal((await laptop.request('POST', 'authn/logout')).statusCode, 204)
  // Instance A evicted its cache.
  assert.equal((await statusOf(a.app, phone.token)).body.authenticated, false)
  // Instance B may serve its cached answer for at most the configured 2 s…
  a.clock.advance(1_999)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, true)
  // …and no longer.
  a.clock.advance(1)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, false)
  assert.equal((await statusOf(b.app, laptop.token)).body.authenticated, false)
})

test('refresh on one instance is honoured by another: the new token works there, the old one only for the grace', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '0s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '0s' }, { database, clock: a.clock })
  const client = await loggedIn(a.app, ADMIN_EMAIL)
  const old = client.token
  assert.equal((await client.request('POST', 'authn/login')).statusCode, 200)
  assert.equal((await statusOf(b.app, client.token)).body.authenticated, true)
  assert.equal((await statusOf(b.app, old)).body.authenticated, true)
  a.clock.advance(60_000)
  assert.equal((await statusOf(b.app, old)).body.authenticated, false)
})

test('a token refreshed on one instance works at once on another that still caches the session', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '5s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '5s' }, { database, clock: a.clock })
  const client = await loggedIn(a.app, ADMIN_EMAIL)
  const old = client.token
  assert.equal((await statusOf(b.app, old)).body.authenticated, true)
  a.clock.advance(1_000)
  assert.equal((await client.request('POST', 'authn/login')).statusCode, 200)
  // B's cached row predates the refresh; the new token must still pass there.
  assert.equal((await statusOf(b.app, client.token)).body.authenticated, true)
  assert.equal((await statusOf(b.app, client.token)).body.authenticated, true)
  assert.equal((await statusOf(b.app, old)).body.authenticated, true)
  // A token that the row has superseded beyond the grace is still refused.
  a.clock.advance(60_000)
  assert.equal((await statusOf(b.app, old)).body.authenticated, false)
})
