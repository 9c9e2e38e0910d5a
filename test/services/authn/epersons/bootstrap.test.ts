import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTestDatabase } from '../../../helpers/build-app.ts'
import { ADMIN_EMAIL, BrowserClient, decodeJwt, loggedIn, PASSWORD, startAuthn, statusOf } from '../helpers.ts'

test('without AUTHN_SECRET a secret is generated once into the secrets file (never the database), shared by every instance and restart', async (t) => {
  const database = await createTestDatabase(t)
  const first = await startAuthn(t, {}, { database })
  const client = await loggedIn(first.app, ADMIN_EMAIL)
  const stored = (await first.secretStore.load()).secrets['authn.jwt'] ?? []
  assert.equal(stored.length, 1)
  assert.ok(stored[0].secret.length >= 32)
  assert.deepEqual(await first.database.db.selectFrom('authn_settings').select('name').where('name', '=', 'jwt_secret').execute(), [])

  // A second instance (or a restart) with the same secrets file accepts the first one's token.
  const second = await startAuthn(t, {}, { database, clock: first.clock })
  assert.equal((await statusOf(second.app, client.token)).body.authenticated, true)
  assert.deepEqual((await second.secretStore.load()).secrets['authn.jwt'], stored)
})

test('AUTHN_SECRET signs tokens: an instance with another secret rejects them', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_SECRET: 'a'.repeat(40) }, { database })
  const client = await loggedIn(a.app, ADMIN_EMAIL)
  assert.equal(decodeJwt(client.token ?? '').header.alg, 'HS256')
  const b = await startAuthn(t, { AUTHN_SECRET: 'b'.repeat(40) }, { database, clock: a.clock })
  assert.equal((await statusOf(b.app, client.token)).body.authenticated, false)
  const c = await startAuthn(t, { AUTHN_SECRET: 'a'.repeat(40) }, { database, clock: a.clock })
  assert.equal((await statusOf(c.app, client.token)).body.authenticated, true)
})

test('AUTHN_ADMIN_EMAIL/PASSWORD create an administrator once and never reset its password', async (t) => {
  const database = await createTestDatabase(t)
  const first = await startAuthn(t, {}, { database })
  const admin = await loggedIn(first.app, 'ADMIN@example.org')
  const status = await admin.request('GET', 'authn/status')
  assert.equal(status.json()._embedded.eperson.email, ADMIN_EMAIL)

  // A restart with another password neither fails nor changes the password, nor ends sessions.
  const second = await startAuthn(t, { AUTHN_ADMIN_PASSWORD: 'a different password' }, { database, clock: first.clock })
  assert.equal((await statusOf(second.app, admin.token)).body.authenticated, true)
  const relogin = await new BrowserClient(second.app).login(ADMIN_EMAIL, PASSWORD)
  assert.equal(relogin.statusCode, 200)
  const members = await database.db
    .selectFrom('authn_group_members')
    .innerJoin('authn_groups', 'authn_groups.uuid', 'authn_group_members.group_uuid')
    .select('authn_groups.name')
    .execute()
  assert.deepEqual(members, [{ name: 'Administrator' }])
})

test('a configuration error names the bad variable', async (t) => {
  await assert.rejects(startAuthn(t, { AUTHN_IP_GROUPS: 'Campus=not-an-ip' }), /AUTHN_IP_GROUPS/)
  await assert.rejects(startAuthn(t, { AUTHN_SHORT_LIVED_LIFETIME: '5s' }), /AUTHN_SHORT_LIVED_LIFETIME/)
  await assert.rejects(startAuthn(t, { AUTHN_OIDC_ISSUER: 'https://idp.example.org' }), /must be set together/)
})
