import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import { createDb } from '../../../src/core/db/create-db.ts'
import { testDatabaseUrl, testDialect } from '../../helpers/build-app.ts'
import { authorize, basic, createApp, merchantFixture, paymentsApp } from './helpers.ts'

const transactionOf = (response: { statusCode: number; body: string; json(): unknown }) => {
  assert.equal(response.statusCode, 200, response.body)
  return (response.json() as { transaction: { capturedAmount: number; pendingAmount: number; trail: unknown[] } }).transaction
}

test('GET /transactions/{id} answers at once what this instance wrote: a capture, then a revoked membership', async (t) => {
  const fixture = await merchantFixture(t)
  const { call, merchant, owner } = fixture
  const id = await authorize(fixture, merchant.id)
  // Read twice: the second answer may come from memory.
  for (let read = 0; read < 2; read++) assert.equal(transactionOf(await call('GET', `/transactions/${id}`)).capturedAmount, 0)

  assert.equal((await call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 201)
  const captured = transactionOf(await call('GET', `/transactions/${id}`))
  assert.equal(captured.capturedAmount, 100)
  assert.equal(captured.pendingAmount, 200)
  assert.equal(captured.trail.length, 1)

  const second = await createApp(fixture.app, 'Second')
  assert.equal((await call('POST', `/merchants/${merchant.id}/apps`, { appId: second.id })).statusCode, 201)
  const revoke = await fixture.app.inject({ method: 'DELETE', url: `/merchants/${merchant.id}/apps/${owner.id}`, headers: { authorization: basic(second.key) } })
  assert.equal(revoke.statusCode, 204)
  assert.equal((await call('GET', `/transactions/${id}`)).statusCode, 403)
})

test('on PostgreSQL, GET /transactions/{id} is prepared once on its connection and then only executed', { skip: testDialect !== 'postgres' && 'prepared statements of core/db are PostgreSQL-only' }, async (t) => {
  // One connection: the reads run on the session whose pg_prepared_statements is read.
  const schema = `test_${randomBytes(6).toString('hex')}`
  const database = await createDb(testDatabaseUrl, { schema, poolSize: 1 })
  t.after(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db)
    await database.destroy()
  })
  const fixture = await merchantFixture(t, { database })
  const id = await authorize(fixture, fixture.merchant.id)
  for (let read = 0; read < 5; read++) assert.equal(transactionOf(await fixture.call('GET', `/transactions/${id}`)).capturedAmount, 0)
  const { rows } = await sql<{ executions: number }>`
    select (generic_plans + custom_plans)::int as executions from pg_prepared_statements
    where statement like 'select "payments_transactions".*, (exists %' and statement like '%left join "payments_trail"%'`.execute(database.db)
  // Prepared once; named from the statement's second run in this process (an earlier test may
  // have run it), so at least the last four reads ran it.
  assert.equal(rows.length, 1)
  assert.ok((rows[0]?.executions ?? 0) >= 4, JSON.stringify(rows))
})

test('a capture made by another process on the same SQLite file is seen within PAYMENTS_READ_CACHE_LAG, and at once with 0s', { skip: testDialect !== 'sqlite' && 'the read cache is SQLite-only' }, async (t) => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'triad-read-cache-')), 'payments.sqlite')}`
  // Three connections to one file, as three processes would have.
  const [databaseA, databaseB, databaseC] = [await createDb(url), await createDb(url), await createDb(url)]
  t.after(() => Promise.all([databaseA.destroy(), databaseB.destroy(), databaseC.destroy()]))
  const a = await merchantFixture(t, { database: databaseA, env: { PAYMENTS_READ_CACHE_LAG: '250ms' } })
  const b = await paymentsApp(t, { database: databaseB })
  const exact = await paymentsApp(t, { database: databaseC, env: { PAYMENTS_READ_CACHE_LAG: '0s' } })
  const id = await authorize(a, a.merchant.id)
  const read = async (app: typeof b.app) => transactionOf(await app.inject({ url: `/transactions/${id}`, headers: a.headers }))
  assert.equal((await read(a.app)).capturedAmount, 0)
  assert.equal((await read(exact.app)).capturedAmount, 0)

  const capture = await b.app.inject({ method: 'POST', url: `/transactions/${id}/captures`, headers: a.headers, payload: { amount: 100 } })
  assert.equal(capture.statusCode, 201, capture.body)

  assert.equal((await read(exact.app)).capturedAmount, 100, 'with 0s every read notices the other process')
  assert.equal((await read(a.app)).capturedAmount, 0, 'within the lag the instance may still answer from memory')
  a.clock.advance(250)
  assert.equal((await read(a.app)).capturedAmount, 100, 'after the lag it has noticed')
})
