import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { sql } from 'kysely'
import { createDb, type Database } from '../../../../src/core/db/create-db.ts'
import { memorySecretStore } from '../../../../src/core/security/secrets-file.ts'
import { buildTestApp, type Cleanup, createTestDatabase, testDialect } from '../../../helpers/build-app.ts'
import { BrowserClient, loggedIn, PASSWORD, statusOf } from '../../authn/helpers.ts'
import { clientJson, pay, paymentBody } from '../client/helpers.ts'
import { basic, createApp, createMerchant } from '../helpers.ts'
import { FRICTIONLESS } from './helpers.ts'

const ADMIN = 'admin@example.org'

/** Every table of the database as text, as a dump would hold it. */
async function dump(database: Database): Promise<string> {
  const tables =
    database.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(database.db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(database.db)
  const parts: string[] = []
  for (const { name } of tables.rows) parts.push(JSON.stringify((await sql`select * from ${sql.table(name)}`.execute(database.db)).rows))
  return parts.join('\n')
}

/** The database alone, copied to a new place: a new SQLite file, or a fresh PostgreSQL schema with every row. */
async function copyDatabase(t: Cleanup, source: Database): Promise<Database> {
  if (testDialect === 'sqlite') {
    const file = join(mkdtempSync(join(tmpdir(), 'triad-copy-')), 'triad.sqlite')
    await sql`vacuum into ${file}`.execute(source.db)
    const copy = await createDb(`sqlite:${file}`)
    t.after(() => copy.destroy())
    return copy
  }
  const copy = await createTestDatabase(t)
  const from = (await sql<{ schema: string }>`select current_schema() as schema`.execute(source.db)).rows[0].schema
  const to = (await sql<{ schema: string }>`select current_schema() as schema`.execute(copy.db)).rows[0].schema
  const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${from}`.execute(source.db)
  for (const { name } of tables.rows) {
    await sql`create table ${sql.table(`${to}.${name}`)} (like ${sql.table(`${from}.${name}`)} including all)`.execute(copy.db)
    await sql`insert into ${sql.table(`${to}.${name}`)} select * from ${sql.table(`${from}.${name}`)}`.execute(copy.db)
  }
  return copy
}

test('a copy of the database alone, started with a fresh secrets file, decrypts no saved card and verifies no old token', async (t) => {
  const env = { AUTHN_ADMIN_EMAIL: ADMIN, AUTHN_ADMIN_PASSWORD: PASSWORD, PAYMENTS_RATE_LIMIT: '0' }
  const original = await buildTestApp(t, { services: ['authn', 'payments'], env })
  const admin = await loggedIn(original.app, ADMIN)
  const owner = await createApp(original.app, 'Owner')
  const headers = { authorization: basic(owner.key) }
  const merchant = await createMerchant(original.app, owner.key)
  const authorization = await pay(original.app, await paymentBody(original.app, String(merchant.key), { test: FRICTIONLESS }))
  const { authorizationId } = clientJson<{ authorizationId: string }>(authorization)
  const saved = await original.app.inject({ method: 'POST', url: `/merchants/${merchant.id}/cards`, headers, payload: { transactionId: authorizationId } })
  assert.equal(saved.statusCode, 201, saved.body)
  const cardId = saved.json().card.id
  const charge = (app: typeof original.app, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/merchants/${merchant.id}/transactions`, headers, payload: { currency: 'EUR', amount: 100, ...payload } })
  assert.equal((await charge(original.app, { cardId })).statusCode, 201, 'the saved card charges where its key is')
  assert.equal((await statusOf(original.app, admin.token)).body.authenticated, true)

  // No key is in the database: not the vault key, not the signing secret, not the webhook key.
  const document = await original.secretStore.load()
  const secrets = Object.values(document.secrets).flatMap((keys) => keys.map((key) => key.secret))
  assert.equal(secrets.length, 3)
  const text = await dump(original.database)
  for (const secret of secrets) assert.ok(!text.includes(secret), 'a key found in the database')

  const copy = await copyDatabase(t, original.database)
  const restored = await buildTestApp(t, { services: ['authn', 'payments'], env, database: copy, clock: original.clock, secretStore: memorySecretStore() })

  // The saved card cannot be decrypted, so it cannot be charged (by card or by transaction).
  for (const payload of [{ cardId }, { transactionId: authorizationId }]) {
    const refused = await charge(restored.app, payload)
    assert.equal(refused.statusCode, 400, refused.body)
    assert.equal(refused.json().code, 2)
    assert.match(refused.json().message, /stored card can no longer be read/)
  }
  // The old bearer token verifies nowhere: 401 where a login is needed, anonymous in the status.
  const stale = new BrowserClient(restored.app)
  await stale.request('GET', 'security/csrf')
  stale.token = admin.token
  assert.equal((await stale.request('POST', 'authn/shortlivedtokens')).statusCode, 401)
  assert.equal((await statusOf(restored.app, admin.token)).body.authenticated, false)
  // What the database does hold still works: the password logs in afresh.
  assert.equal((await statusOf(restored.app, (await loggedIn(restored.app, ADMIN)).token)).body.authenticated, true)
})
