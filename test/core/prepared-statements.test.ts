import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { CompiledQuery, type Kysely, sql } from 'kysely'
import { createDb, type Database } from '../../src/core/db/create-db.ts'
import { migrateToLatest } from '../../src/core/db/migrator.ts'
import { withTransaction } from '../../src/core/db/transaction.ts'
import { type Cleanup, testDatabaseUrl, testDialect } from '../helpers/build-app.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a scratch table of the test's own.
type AnyDb = Kysely<any>

/**
 * A database over ONE connection in a schema of its own, with a table `items`: every statement
 * runs on the session whose pg_prepared_statements the test reads.
 */
async function oneConnection(t: Cleanup, options: { preparedStatements?: boolean; preparedStatementsPerConnection?: number } = {}): Promise<Database & { db: AnyDb }> {
  const schema = `test_${randomBytes(6).toString('hex')}`
  const database = await createDb(testDatabaseUrl, { schema, poolSize: 1, ...options })
  t.after(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db)
    await database.destroy()
  })
  await database.db.schema.createTable('items').addColumn('id', 'integer', (col) => col.primaryKey()).addColumn('label', 'text').execute()
  await database.db.insertInto('items').values([{ id: 1, label: 'one' }, { id: 2, label: 'two' }]).execute()
  return database
}

interface PreparedRow {
  name: string
  statement: string
  executions: number
}

let looks = 0

/**
 * The named statements of the connection, with how often each ran (generic and custom plans
 * together), but the test's own setup. The question's text differs every time, so that it is
 * never named itself.
 */
async function preparedOf(db: AnyDb): Promise<PreparedRow[]> {
  const { rows } = await sql<PreparedRow>`select name, statement, (generic_plans + custom_plans)::int as executions from pg_prepared_statements where from_sql = false /* ${sql.raw(String(looks++))} */`.execute(db)
  return rows.filter((row) => !row.statement.startsWith('insert into "items"'))
}

const readLabel = (db: AnyDb, id: number) => db.selectFrom('items').select('label').where('id', '=', id).executeTakeFirst()

describe('prepared statements on PostgreSQL', { skip: testDialect !== 'postgres' && 'PostgreSQL only: SQLite prepares every statement already' }, () => {
  it('prepares a repeated statement once on its connection and runs it from there, its values bound anew each time', async (t) => {
    const { db } = await oneConnection(t)
    const labels = []
    for (let round = 0; round < 6; round++) labels.push((await readLabel(db, (round % 2) + 1))?.label)
    assert.deepEqual(labels, ['one', 'two', 'one', 'two', 'one', 'two'])
    const prepared = (await preparedOf(db)).filter((row) => row.statement.includes('from "items"'))
    // Seen once, it stays unnamed; named from the second run on, and parsed only then.
    assert.equal(prepared.length, 1, JSON.stringify(prepared))
    assert.equal(prepared[0]?.executions, 5)
    assert.match(prepared[0]?.name ?? '', /^triad_/)
  })

  it('never names transaction control, DDL, a statement seen once, or a migration', async (t) => {
    const database = await oneConnection(t)
    const { db } = database
    for (let round = 0; round < 3; round++) {
      await withTransaction(database, async (trx) => {
        await trx.updateTable('items').set({ label: `v${round}` }).where('id', '=', 1).execute()
      })
      await sql`set statement_timeout = 0`.execute(db)
    }
    await db.selectFrom('items').select('id').where('label', '=', 'once').execute()
    const migration = { up: async (on: AnyDb) => void (await on.schema.createTable('more').addColumn('id', 'integer').execute()) }
    // Twice: the second run repeats the first's reads of the history table.
    await migrateToLatest(db, 'prepared_test', { '202601010000_create_more': migration })
    await migrateToLatest(db, 'prepared_test', { '202601010000_create_more': migration })
    const statements = (await preparedOf(db)).map((row) => row.statement)
    assert.equal(statements.length, 1, JSON.stringify(statements))
    assert.match(statements[0] ?? '', /^update "items"/, 'only the repeated UPDATE is named')
  })

  it('keeps at most the cap of names on a connection however many statements it runs, and answers right after evicting', async (t) => {
    const { db } = await oneConnection(t, { preparedStatementsPerConnection: 5 })
    const all = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements /* ${sql.raw(String(looks++))} */`.execute(db)).rows[0]?.n
    // Forty texts, each run three times: every one qualifies for a name.
    for (let text = 0; text < 40; text++) {
      for (let round = 0; round < 3; round++) {
        const { rows } = await db.executeQuery<{ n: number }>(CompiledQuery.raw(`select ${text} + $1::int as n`, [round]))
        assert.equal(rows[0]?.n, text + round)
      }
      assert.ok(((await all()) ?? 0) <= 5)
    }
    const prepared = await preparedOf(db)
    assert.equal(await all(), 5)
    // The five most recent, and an evicted text comes back with a right answer.
    assert.deepEqual(prepared.map((row) => row.statement).sort(), [35, 36, 37, 38, 39].map((text) => `select ${text} + $1::int as n`).sort())
    const { rows } = await db.executeQuery<{ n: number }>(CompiledQuery.raw('select 0 + $1::int as n', [7]))
    assert.equal(rows[0]?.n, 7)
  })

  it('sends every statement unnamed when prepared statements are off (a pooler in transaction mode)', async (t) => {
    const { db } = await oneConnection(t, { preparedStatements: false })
    for (let round = 0; round < 5; round++) assert.equal((await readLabel(db, 1))?.label, 'one')
    assert.deepEqual(await preparedOf(db), [])
  })

  it('runs a named statement again after its table changed shape, alone and inside a transaction', async (t) => {
    const database = await oneConnection(t)
    const { db } = database
    const readAll = (on: AnyDb) => on.selectFrom('items').selectAll().where('id', '=', 1).executeTakeFirst()
    await readAll(db)
    await readAll(db)
    assert.equal((await preparedOf(db)).length, 1)
    await sql`alter table items add column price integer`.execute(db)
    // PostgreSQL refuses a prepared plan whose result columns changed: parsed again, run again.
    assert.deepEqual(await readAll(db), { id: 1, label: 'one', price: null })
    await sql`alter table items add column weight integer`.execute(db)
    const inTransaction = await withTransaction(database, (trx) => readAll(trx))
    assert.deepEqual(inTransaction, { id: 1, label: 'one', price: null, weight: null })
  })
})
