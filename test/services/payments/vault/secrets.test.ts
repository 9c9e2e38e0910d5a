import assert from 'node:assert/strict'
import { createCipheriv, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Kysely } from 'kysely'
import pino from 'pino'
import { memorySecretStore, openSecretsFile } from '../../../../src/core/security/secrets-file.ts'
import { createPaymentsContext, createVault } from '../../../../src/services/payments/compose.ts'
import { vaultKeyIdOf } from '../../../../src/services/payments/modules/vault/vault.crypto.ts'
import type { VaultTables } from '../../../../src/services/payments/modules/vault/vault.table.ts'
import { startTriadProcess } from '../../../helpers/triad-process.ts'
import { clientFixture, expectClientError, pay, paymentBody, tokenize } from '../client/helpers.ts'
import { authorize, createMerchant } from '../helpers.ts'
import { FRICTIONLESS, paymentsCli, payWithCard, sealedCardOf } from './helpers.ts'
import { serviceBaseOf } from '../../../helpers/build-app.ts'

type Fixture = Awaited<ReturnType<typeof clientFixture>>
const recurring = (fixture: Fixture, transactionId: string, merchantId = fixture.merchant.id, headers = fixture.headers) =>
  fixture.app.inject({ method: 'POST', url: `/merchants/${merchantId}/transactions`, headers, payload: { transactionId, currency: 'EUR', amount: 100 } })
const vaultDb = (fixture: Fixture) => fixture.db as unknown as Kysely<VaultTables>

test('vault rotate-key re-seals every card while the server runs; old keys keep opening until retired, and retire-key refuses while a card uses one', async (t) => {
  const fixture = await clientFixture(t)
  const first = await payWithCard(fixture)
  const [, k1] = (await sealedCardOf(fixture, first)).split('.')
  const prepared = await paymentBody(fixture.app, fixture.key, { test: FRICTIONLESS, number: '5555555555554444' })
  assert.equal((await paymentsCli(fixture, 'vault', 'retire-key', k1)).code, 1, 'the active key')

  const rotated = await paymentsCli(fixture, 'vault', 'rotate-key', '--batch', '1', '--json')
  assert.equal(rotated.code, 0, rotated.err)
  const { newKeyId: k2, resealed } = JSON.parse(rotated.out) as { newKeyId: string; resealed: number }
  assert.equal(resealed, 1)
  assert.ok((await sealedCardOf(fixture, first)).startsWith(`v2.${k2}.`))

  // The server has not checked the file yet: tokens it handed out under k1 still pay, and it
  // still seals under k1; so k1 cannot be retired while that card exists.
  const second = await payWithCard(fixture, prepared)
  assert.ok((await sealedCardOf(fixture, second)).startsWith(`v2.${k1}.`))
  const refused = await paymentsCli(fixture, 'vault', 'retire-key', k1)
  assert.equal(refused.code, 1)
  assert.match(refused.err, /1 stored card\(s\) are still sealed under key/)

  // A card under k2 makes the server read the file at once; from then on it seals under k2.
  assert.equal((await recurring(fixture, first)).statusCode, 201)
  assert.ok((await tokenize(fixture.app, 'pcn', '4111111111111111')).token.startsWith(`v2.${k2}.`))

  const again = JSON.parse((await paymentsCli(fixture, 'vault', 'rotate-key', '--json')).out) as { newKeyId: string; resealed: number; retirable: string[] }
  assert.equal(again.resealed, 2)
  assert.deepEqual(new Set(again.retirable), new Set([k1, k2]))
  for (const id of [k1, k2]) assert.equal((await paymentsCli(fixture, 'vault', 'retire-key', id)).code, 0)
  const keys = JSON.parse((await paymentsCli(fixture, 'vault', 'keys', '--json')).out) as { keys: Array<{ id: string; cards: number }> }
  assert.deepEqual(
    keys.keys.map(({ id, cards }) => ({ id, cards })),
    [{ id: again.newKeyId, cards: 2 }],
  )
  fixture.clock.advance(5_000)
  assert.equal((await recurring(fixture, first)).statusCode, 201)
  assert.equal((await recurring(fixture, second)).statusCode, 201)
})

test('PAYMENTS_VAULT_KEY takes precedence over the file: it seals, nothing is generated; a listed older key still opens', async (t) => {
  const oldKey = 'a7'.repeat(32)
  const newKey = 'b8'.repeat(32)
  const fixture = await clientFixture(t, { env: { PAYMENTS_VAULT_KEY: oldKey } })
  const before = await payWithCard(fixture)
  assert.ok((await sealedCardOf(fixture, before)).startsWith(`v2.${vaultKeyIdOf(oldKey)}.`))
  assert.deepEqual((await fixture.secretStore.load()).secrets['payments.vault'] ?? [], [])

  const rotatedEnv = await clientFixture(t, { env: { PAYMENTS_VAULT_KEY: `${newKey},${oldKey}` }, database: fixture.database })
  assert.equal((await recurring(rotatedEnv, before, fixture.merchant.id, fixture.headers)).statusCode, 201)
  const result = await paymentsCli(rotatedEnv, 'vault', 'rotate-key', '--json')
  assert.equal(result.code, 0, result.err)
  assert.equal(JSON.parse(result.out).newKeyId, undefined, 'no key generated while the environment supplies one')
  assert.ok((await sealedCardOf(fixture, before)).startsWith(`v2.${vaultKeyIdOf(newKey)}.`))
  assert.equal((await recurring(rotatedEnv, before, fixture.merchant.id, fixture.headers)).statusCode, 201)
  assert.deepEqual((await rotatedEnv.secretStore.load()).secrets['payments.vault'] ?? [], [])
})

test('live merchants cannot take payments until the vault key is supplied from outside', async (t) => {
  const fixture = await clientFixture(t)
  const live = await createMerchant(fixture.app, fixture.owner.key, { test: false })
  const error = expectClientError(await pay(fixture.app, await paymentBody(fixture.app, String(live.key), { test: null })), 'PAYMENT_INTEGRATION_DISABLED')
  assert.match(String(error.message), /PAYMENTS_VAULT_KEY/)
  const refused = await recurring(fixture, await authorize(fixture, live.id), live.id)
  assert.equal(refused.statusCode, 400)
  assert.equal(refused.json().code, 27)
  assert.match(refused.json().message, /card vault key is supplied from outside/)

  // A secrets file the operator named counts as supplied: the payment reaches the acquirer.
  const chosen = openSecretsFile(join(mkdtempSync(join(tmpdir(), 'triad-vault-')), 'secrets.json'), { chosen: true })
  const supplied = await clientFixture(t, { secretStore: chosen })
  const liveThere = await createMerchant(supplied.app, supplied.owner.key, { test: false })
  expectClientError(await pay(supplied.app, await paymentBody(supplied.app, String(liveThere.key), { test: null })), 'PAYMENT_METHOD_ERROR')
})

/** A card number sealed as versions before key ids did: `v1.<iv>.<tag>.<ciphertext>`. */
function legacySeal(keyHex: string, plain: string, aad: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv)
  cipher.setAAD(Buffer.from(aad))
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

test('an old database: the key in payments_vault_keys moves to the secrets file (logged), and its cards keep opening', async (t) => {
  const old = await clientFixture(t)
  const legacyKey = 'c4'.repeat(32)
  const cardRef = 'vcard_000000000000000000000001'
  await vaultDb(old).deleteFrom('payments_vault_keys').execute()
  await vaultDb(old).insertInto('payments_vault_keys').values({ id: 'vault', secret: legacyKey, created: '2025-06-01T00:00:00.000Z' }).execute()
  await vaultDb(old)
    .insertInto('payments_vault_cards')
    .values({ id: cardRef, sealed: legacySeal(legacyKey, '4111111111111111', `card:${cardRef}`), created: '2025-06-01T00:00:00.000Z' })
    .execute()
  const base = await authorize(old, old.merchant.id, { cardRef })

  // The first start of this version, with an empty secrets file.
  const store = memorySecretStore()
  const started = await clientFixture(t, { database: old.database, secretStore: store })
  assert.deepEqual(await vaultDb(old).selectFrom('payments_vault_keys').selectAll().execute(), [])
  assert.deepEqual(
    ((await store.load()).secrets['payments.vault'] ?? []).map((key) => key.secret),
    [legacyKey],
  )
  assert.equal((await recurring(started, base, old.merchant.id, old.headers)).statusCode, 201)
  const rotated = JSON.parse((await paymentsCli(started, 'vault', 'rotate-key', '--json')).out) as { resealed: number }
  assert.ok(rotated.resealed >= 1)
  assert.ok((await vaultDb(old).selectFrom('payments_vault_cards').select('sealed').where('id', '=', cardRef).executeTakeFirstOrThrow()).sealed.startsWith('v2.'))
  assert.equal((await recurring(started, base, old.merchant.id, old.headers)).statusCode, 201)

  // The move is logged.
  await vaultDb(old).insertInto('payments_vault_keys').values({ id: 'vault', secret: 'd5'.repeat(32), created: '2025-06-01T00:00:00.000Z' }).execute()
  const messages: string[] = []
  const deps = {
    ...serviceBaseOf(started),
    config: started.config.payments,
  }
  await createVault(createPaymentsContext(deps, pino({ level: 'silent' })), deps).init({ info: (message) => messages.push(message) })
  assert.deepEqual(messages, [`moved the card vault key out of the database (payments_vault_keys) into the secrets file as key ${vaultKeyIdOf('d5'.repeat(32))}`])
})

test('a production start without supplied secrets logs one loud warning naming what to set; with them, none', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'triad-production-'))
  const untilServing = async (process_: Awaited<ReturnType<typeof startTriadProcess>>) => {
    while (!/serving /.test(process_.output())) await new Promise((resolve) => process_.child.stdout.once('data', resolve))
    return process_.output()
  }
  // TRIAD_SECRETS_FILE empty is unset: the default ./data/secrets.json, here in the process's own directory.
  const bare = await startTriadProcess(t, { NODE_ENV: 'production', TRIAD_SECRETS_FILE: '', TRIAD_SERVICES: 'authn,payments' }, { cwd: dir })
  const output = await untilServing(bare)
  const warnings = output.split('\n').filter((line) => line.includes('SECURITY'))
  assert.equal(warnings.length, 1, output)
  assert.match(warnings[0], /AUTHN_SECRET, PAYMENTS_VAULT_KEY, PAYMENTS_WEBHOOK_KEY are not supplied.*TRIAD_SECRETS_FILE/)
  assert.match(warnings[0], /"level":40|WARN/)
  const file = join(dir, 'data', 'secrets.json')
  assert.equal(statSync(file).mode & 0o777, 0o600)
  assert.deepEqual(Object.keys(JSON.parse(readFileSync(file, 'utf8')).secrets).sort(), ['authn.jwt', 'payments.vault', 'payments.webhooks'])

  const supplied = await startTriadProcess(t, {
    NODE_ENV: 'production',
    TRIAD_SERVICES: 'authn,payments',
    AUTHN_SECRET: 'p'.repeat(40),
    PAYMENTS_VAULT_KEY: 'e6'.repeat(32),
    PAYMENTS_WEBHOOK_KEY: 'f7'.repeat(32),
  })
  assert.doesNotMatch(await untilServing(supplied), /SECURITY/)
})
