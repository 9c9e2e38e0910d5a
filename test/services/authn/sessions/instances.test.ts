import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTestDatabase } from '../../../helpers/build-app.ts'
import { ADMIN_EMAIL, loggedIn, startAuthn, statusOf } from '../helpers.ts'

test('a session revoked on one instance stops on another within AUTHN_REVOCATION_CACHE, as a logout does; the other session lives on', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '2s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '2s' }, { database, clock: a.clock })
  const laptop = await loggedIn(a.app, ADMIN_EMAIL)
  const phone = await loggedIn(b.app, ADMIN_EMAIL)
  for (const app of [a.app, b.app]) for (const token of [laptop.token, phone.token]) assert.equal((await statusOf(app, token)).body.authenticated, true)
  const phoneSession = (await phone.request('GET', 'authn/sessions')).json()._embedded.sessions.find((item: { current: boolean }) => item.current)

  // Revoked through instance A, the session's tokens stop on A at once…
  assert.equal((await laptop.request('DELETE', `authn/sessions/${phoneSession.id}`)).statusCode, 204)
  assert.equal((await statusOf(a.app, phone.token)).body.authenticated, false)
  // …and on B, which may still serve its cached row, no later than the configured bound.
  a.clock.advance(1_999)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, true)
  a.clock.advance(1)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, false)
  assert.equal((await statusOf(b.app, laptop.token)).body.authenticated, true)
})

test('with AUTHN_REVOCATION_CACHE=0s a session revoked on one instance is refused by the other on the very next request', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '0s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '0s' }, { database, clock: a.clock })
  const laptop = await loggedIn(a.app, ADMIN_EMAIL)
  const phone = await loggedIn(b.app, ADMIN_EMAIL)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, true)
  const phoneSession = (await phone.request('GET', 'authn/sessions')).json()._embedded.sessions.find((item: { current: boolean }) => item.current)
  assert.equal((await laptop.request('DELETE', `authn/sessions/${phoneSession.id}`)).statusCode, 204)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, false)
  assert.equal((await statusOf(b.app, laptop.token)).body.authenticated, true)
})
