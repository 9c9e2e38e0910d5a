import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Kysely } from 'kysely'
import { isForeignKeyViolation, isUniqueViolation } from '../../src/core/db/errors.ts'
import { type MigrationSet, migrateToLatest } from '../../src/core/db/migrator.ts'
import { lockForUpdate, withTransaction } from '../../src/core/db/transaction.ts'
import { createTestDatabase, testDialect } from '../helpers/build-app.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are written against no app schema.
type AnyDb = Kysely<any>

const sampleMigrations: MigrationSet = {
  '202601010000_create_accounts': {
    up: async (db: AnyDb) => {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('email', 'text', (col) => col.notNull().unique())
        .addColumn('balance', 'bigint', (col) => col.notNull().defaultTo(0))
        .execute()
    },
    down: async (db: AnyDb) => {
      await db.schema.dropTable('accounts').execute()
    },
  },
  '202601010100_create_postings': {
    up: async (db: AnyDb) => {
      await db.schema
        .createTable('postings')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
        .addColumn('amount', 'bigint', (col) => col.notNull())
        .execute()
    },
    down: async (db: AnyDb) => {
      await db.schema.dropTable('postings').execute()
    },
  },
}

describe(`storage on ${testDialect}`, () => {
  it('runs migrations once and is idempotent on a second run', async (t) => {
    const database = await createTestDatabase(t)
    const first = await migrateToLatest(database.db, 'sample', sampleMigrations)
    assert.deepEqual(
      first.results?.map((result) => [result.migrationName, result.status]),
      [
        ['202601010000_create_accounts', 'Success'],
        ['202601010100_create_postings', 'Success'],
      ],
    )
    const second = await migrateToLatest(database.db, 'sample', sampleMigrations)
    assert.deepEqual(second.results, [])
    await database.db.insertInto('accounts').values({ id: 'a1', email: 'a@example.org', balance: 5 }).execute()
    const row = await database.db.selectFrom('accounts').select(['id', 'balance']).executeTakeFirstOrThrow()
    assert.deepEqual(row, { id: 'a1', balance: 5 })
  })

  it("keeps each service's migration history apart", async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', sampleMigrations)
    const other = await migrateToLatest(database.db, 'other', {
      '202601010000_create_notes': {
        up: async (db: AnyDb) => {
          await db.schema
            .createTable('notes')
            .addColumn('id', 'text', (col) => col.primaryKey())
            .execute()
        },
      },
    })
    assert.equal(other.results?.length, 1)
  })

  it('reports a failing migration by name and leaves no partial history', async (t) => {
    const database = await createTestDatabase(t)
    await assert.rejects(
      migrateToLatest(database.db, 'broken', {
        '202601010000_break': {
          up: async (db: AnyDb) => {
            await db.schema.createTable('accounts').addColumn('id', 'text').execute()
            await db.schema.createTable('accounts').addColumn('id', 'text').execute()
          },
        },
      }),
      /migration 202601010000_break of broken failed/,
    )
  })

  it('translates unique and foreign-key violations the same way on both engines', async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', sampleMigrations)
    await database.db.insertInto('accounts').values({ id: 'a1', email: 'a@example.org' }).execute()
    const duplicate = await database.db
      .insertInto('accounts')
      .values({ id: 'a2', email: 'a@example.org' })
      .execute()
      .catch((error: unknown) => error)
    assert.ok(isUniqueViolation(duplicate))
    assert.ok(!isForeignKeyViolation(duplicate))
    const orphan = await database.db
      .insertInto('postings')
      .values({ id: 'p1', account_id: 'missing', amount: 1 })
      .execute()
      .catch((error: unknown) => error)
    assert.ok(isForeignKeyViolation(orphan))
  })

  it('reads rows as plain objects keyed by column, with repeated names and empty results', async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', sampleMigrations)
    const db = database.db as AnyDb
    await db.insertInto('accounts').values({ id: 'a', email: 'a@example.org', balance: 5 }).execute()
    const row = await db.selectFrom('accounts').select(['id', 'email', 'balance', 'email as id']).executeTakeFirstOrThrow()
    assert.deepEqual(row, { id: 'a@example.org', email: 'a@example.org', balance: 5 })
    assert.equal(Object.getPrototypeOf(row), Object.prototype)
    assert.deepEqual(await db.selectFrom('accounts').selectAll().where('id', '=', 'none').execute(), [])
    if (testDialect !== 'sqlite') return // streaming needs a cursor module on PostgreSQL
    const streamed = []
    for await (const item of db.selectFrom('accounts').select(['id', 'balance']).stream()) streamed.push(item)
    assert.deepEqual(streamed, [{ id: 'a', balance: 5 }])
  })

  it('rolls a transaction back entirely when its work throws', async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', sampleMigrations)
    await assert.rejects(
      withTransaction(database, async (trx) => {
        await trx.insertInto('accounts').values({ id: 'a1', email: 'a@example.org' }).execute()
        throw new Error('changed my mind')
      }),
      /changed my mind/,
    )
    const count = await database.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    assert.equal(Number(count.n), 0)
  })

  it('keeps a read-check-write invariant under 40 concurrent transactions', async (t) => {
    // The pattern payments uses: read the balance under a lock, refuse if it would pass the
    // limit, else write. 40 withdrawals of 10 from 300 must leave exactly 30 successes.
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', sampleMigrations)
    await database.db.insertInto('accounts').values({ id: 'a1', email: 'a@example.org', balance: 300 }).execute()
    const withdraw = (n: number) =>
      withTransaction(database, async (trx) => {
        const account = await lockForUpdate(database.dialect, trx.selectFrom('accounts').select('balance').where('id', '=', 'a1')).executeTakeFirstOrThrow()
        if (Number(account.balance) < 10) return false
        await trx
          .insertInto('postings')
          .values({ id: `p${n}`, account_id: 'a1', amount: -10 })
          .execute()
        await trx
          .updateTable('accounts')
          .set({ balance: Number(account.balance) - 10 })
          .where('id', '=', 'a1')
          .execute()
        return true
      })
    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => withdraw(n)))
    assert.equal(results.filter(Boolean).length, 30)
    const account = await database.db.selectFrom('accounts').select('balance').executeTakeFirstOrThrow()
    assert.equal(Number(account.balance), 0)
    const postings = await database.db
      .selectFrom('postings')
      .select((eb) => eb.fn.sum<number>('amount').as('total'))
      .executeTakeFirstOrThrow()
    assert.equal(Number(postings.total), -300)
  })

  it('retries a serializable transaction that lost a race, on PostgreSQL', { skip: testDialect !== 'postgres' }, async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', sampleMigrations)
    await database.db.insertInto('accounts').values({ id: 'a1', email: 'a@example.org', balance: 0 }).execute()
    const increment = () =>
      withTransaction(
        database,
        async (trx) => {
          const account = await trx.selectFrom('accounts').select('balance').where('id', '=', 'a1').executeTakeFirstOrThrow()
          await trx
            .updateTable('accounts')
            .set({ balance: Number(account.balance) + 1 })
            .where('id', '=', 'a1')
            .execute()
        },
        { isolation: 'serializable', maxAttempts: 50 },
      )
    await Promise.all(Array.from({ length: 10 }, increment))
    const account = await database.db.selectFrom('accounts').select('balance').executeTakeFirstOrThrow()
    assert.equal(Number(account.balance), 10)
  })
})
