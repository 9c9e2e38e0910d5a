import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCommand } from '../../../../src/core/cli/command.ts'
import { signJwt } from '../../../../src/core/security/jwt.ts'
import { createSecrets, keyIdOf } from '../../../../src/core/security/keyring.ts'
import { deriveKey } from '../../../../src/core/security/secret-token.ts'
import { authnService } from '../../../../src/services/authn/app.ts'
import { createAuthnServices } from '../../../../src/services/authn/services.ts'
import { createTestDatabase, serviceBaseOf, type TestApp } from '../../../helpers/build-app.ts'
import { ADMIN_EMAIL, BrowserClient, decodeJwt, loggedIn, startAuthn, statusOf } from '../helpers.ts'

/** Runs `triad authn …` as another process would: the same database and secrets file, its own keyring. */
async function cli(test_: TestApp, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const group = authnService.commands?.({
    withService: (work) =>
      work({
        ...serviceBaseOf(test_, { secrets: createSecrets(test_.secretStore, test_.clock) }),
        config: test_.config.authn,
      }),
  })
  assert.ok(group)
  const code = await runCommand(group, argv, { out: (text) => out.push(text), err: (text) => err.push(text) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

/** The service dependencies of a test app, as its own plugin got them. */
const depsOf = (test_: TestApp) => ({
  ...serviceBaseOf(test_),
  config: test_.config.authn,
})

const kidOf = (token: string | undefined) => decodeJwt(token ?? '').header.kid

/** A request that needs a valid bearer: 401 without one. */
async function mintShortLived(test_: TestApp, token: string | undefined) {
  const client = new BrowserClient(test_.app)
  await client.request('GET', 'security/csrf')
  client.token = token
  return client.request('POST', 'authn/shortlivedtokens')
}

test('secret rotate: new tokens carry the new kid once a server sees it; old tokens verify until their key is retired', async (t) => {
  const test_ = await startAuthn(t)
  const before = await loggedIn(test_.app, ADMIN_EMAIL)
  const oldKid = kidOf(before.token)

  const rotated = await cli(test_, 'secret', 'rotate', '--json')
  assert.equal(rotated.code, 0, rotated.err)
  const { keyId } = JSON.parse(rotated.out) as { keyId: string }
  assert.notEqual(keyId, oldKid)

  // A running server signs with the new key after its check interval (5 s), or as soon as it
  // meets a token of the new key (an unknown kid makes it read the file again).
  assert.equal(kidOf((await loggedIn(test_.app, ADMIN_EMAIL)).token), oldKid, 'not checked the file yet')
  const other = await startAuthn(t, {}, { database: test_.database, clock: test_.clock })
  const fresh = await loggedIn(other.app, ADMIN_EMAIL)
  assert.equal(kidOf(fresh.token), keyId, 'a server started after the rotation')
  assert.equal((await statusOf(test_.app, fresh.token)).body.authenticated, true)
  assert.equal(kidOf((await loggedIn(test_.app, ADMIN_EMAIL)).token), keyId)

  // The token signed before the rotation still works on both.
  assert.equal((await mintShortLived(test_, before.token)).statusCode, 200)
  assert.equal((await statusOf(other.app, before.token)).body.authenticated, true)

  assert.equal((await cli(test_, 'secret', 'retire', keyId)).code, 1, 'the signing key cannot be retired')
  const retired = await cli(test_, 'secret', 'retire', String(oldKid))
  assert.equal(retired.code, 0, retired.err)
  test_.clock.advance(5_000)
  assert.equal((await mintShortLived(test_, before.token)).statusCode, 401)
  assert.equal((await statusOf(other.app, before.token)).body.authenticated, false)
  assert.equal((await mintShortLived(test_, fresh.token)).statusCode, 200)
})

test('secret rotate --revoke-old cuts off every token signed before it', async (t) => {
  const test_ = await startAuthn(t)
  const before = await loggedIn(test_.app, ADMIN_EMAIL)
  assert.equal((await statusOf(test_.app, before.token)).body.authenticated, true)
  const rotated = await cli(test_, 'secret', 'rotate', '--revoke-old', '--json')
  assert.equal(rotated.code, 0, rotated.err)
  assert.deepEqual(JSON.parse(rotated.out).retired, [kidOf(before.token)])
  test_.clock.advance(5_000)
  assert.equal((await mintShortLived(test_, before.token)).statusCode, 401)
  const after = await loggedIn(test_.app, ADMIN_EMAIL)
  assert.equal((await mintShortLived(test_, after.token)).statusCode, 200)
})

test('AUTHN_SECRET takes precedence: it signs (kid from it), nothing is generated, and rotation is refused', async (t) => {
  const secret = 'e'.repeat(40)
  const test_ = await startAuthn(t, { AUTHN_SECRET: secret })
  const client = await loggedIn(test_.app, ADMIN_EMAIL)
  assert.equal(kidOf(client.token), keyIdOf(secret))
  assert.deepEqual((await test_.secretStore.load()).secrets['authn.jwt'] ?? [], [])
  const refused = await cli(test_, 'secret', 'rotate')
  assert.equal(refused.code, 1)
  assert.match(refused.err, /AUTHN_SECRET is set/)
})

test('an old database: the secret in authn_settings moves to the secrets file with a log line, and its tokens keep verifying', async (t) => {
  const secret = 'L'.repeat(48)
  const database = await createTestDatabase(t)
  // A token as the previous version signed it: the same claims, no kid, the table's secret.
  const old = await startAuthn(t, { AUTHN_SECRET: secret }, { database })
  const client = await loggedIn(old.app, ADMIN_EMAIL)
  const { payload } = decodeJwt(client.token ?? '')
  const legacyToken = await signJwt(payload, deriveKey(secret, 'authn/login-token'))
  assert.equal(decodeJwt(legacyToken).header.kid, undefined)
  await database.db.insertInto('authn_settings' as never).values({ name: 'jwt_secret', value: secret } as never).execute()

  // The first start of the new version, without AUTHN_SECRET, with an empty secrets file.
  const started = await startAuthn(t, {}, { database, clock: old.clock })
  const messages: string[] = []
  await createAuthnServices(depsOf(started), { info: (message) => messages.push(message) })
  assert.deepEqual(messages, [], 'the app moved it already, once')
  const rows = await database.db.selectFrom('authn_settings' as never).select('name' as never).execute()
  assert.deepEqual(rows, [{ name: 'site_uuid' }])
  const keys = (await started.secretStore.load()).secrets['authn.jwt'] ?? []
  assert.deepEqual(
    keys.map((key) => key.secret),
    [secret],
  )
  assert.equal((await statusOf(started.app, legacyToken)).body.authenticated, true)
  assert.equal((await mintShortLived(started, legacyToken)).statusCode, 200)
})

test('the move out of authn_settings is logged', async (t) => {
  const secret = 'M'.repeat(48)
  const first = await startAuthn(t)
  await first.database.db.insertInto('authn_settings' as never).values({ name: 'jwt_secret', value: secret } as never).execute()
  const messages: string[] = []
  const services = await createAuthnServices(depsOf(first), { info: (message) => messages.push(message) })
  assert.equal(messages.length, 1)
  assert.match(messages[0], new RegExp(`moved the JWT signing secret out of the database \\(authn_settings\\) into the secrets file as key ${keyIdOf(secret)}`))
  assert.ok((await services.keyring.current()).find(keyIdOf(secret)))
})
