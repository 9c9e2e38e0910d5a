import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { createDb } from '../../src/core/db/create-db.ts'
import { isUniqueViolation } from '../../src/core/db/errors.ts'
import { type MigrationSet, migrateToLatest } from '../../src/core/db/migrator.ts'
import { withTransaction } from '../../src/core/db/transaction.ts'
import { createTestDatabase, testDialect } from '../helpers/build-app.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are written against no app schema.
type AnyDb = Kysely<any>

const migrations: MigrationSet = {
  '202601010000_create_notes': {
    up: async (db: AnyDb) => {
      await db.schema.createTable('notes').addColumn('id', 'text', (col) => col.primaryKey()).addColumn('body', 'text').execute()
    },
    down: async (db: AnyDb) => {
      await db.schema.dropTable('notes').execute()
    },
  },
}

const countNotes = async (db: AnyDb) => Number((await db.selectFrom('notes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

describe('write transactions that arrive together (group commit on SQLite)', () => {
  it('roll back only the work of the caller that failed, each caller getting its own outcome', async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', migrations)
    await database.db.insertInto('notes').values({ id: 'taken', body: 'before' }).execute()
    const insert = (id: string, fail?: 'throw' | 'duplicate') =>
      withTransaction(database, async (trx) => {
        await trx.insertInto('notes').values({ id, body: 'x' }).execute()
        if (fail === 'throw') throw new Error(`caller ${id} changed its mind`)
        if (fail === 'duplicate') await trx.insertInto('notes').values({ id: 'taken', body: 'again' }).execute()
        return id
      })
    const outcomes = await Promise.allSettled([insert('a'), insert('b', 'throw'), insert('c'), insert('d', 'duplicate'), insert('e')])
    assert.deepEqual(
      outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'rejected')),
      ['a', 'rejected', 'c', 'rejected', 'e'],
    )
    assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /caller b changed its mind/)
    assert.ok(isUniqueViolation((outcomes[3] as PromiseRejectedResult).reason))
    const ids = (await database.db.selectFrom('notes').select('id').orderBy('id').execute()).map((row) => row.id)
    assert.deepEqual(ids, ['a', 'c', 'e', 'taken'])
  })

  it('share one commit, and answer each caller only once it is committed', { skip: testDialect !== 'sqlite' }, async (t) => {
    // Two connections on one file, as two instances would have: the second sees only what the
    // first has committed.
    const dir = mkdtempSync(join(tmpdir(), 'triad-group-commit-'))
    const writer = await createDb(`sqlite:${join(dir, 'db.sqlite')}`)
    const reader = await createDb(`sqlite:${join(dir, 'db.sqlite')}`)
    t.after(async () => {
      await writer.destroy()
      await reader.destroy()
      rmSync(dir, { recursive: true, force: true })
    })
    await migrateToLatest(writer.db, 'sample', migrations)
    const seenByOthers: number[] = []
    const callers = Array.from({ length: 20 }, (_, index) =>
      withTransaction(writer, async (trx) => {
        await trx.insertInto('notes').values({ id: `n${index}`, body: 'x' }).execute()
        seenByOthers.push(await countNotes(reader.db))
      }).then(() => countNotes(reader.db)),
    )
    const afterEach = await Promise.all(callers)
    // Alone, the last caller would have seen the 19 before it committed.
    assert.deepEqual(seenByOthers, Array.from({ length: 20 }, () => 0))
    assert.deepEqual(afterEach, Array.from({ length: 20 }, () => 20))
  })

  it('run each caller again on its own when the shared commit fails', { skip: testDialect !== 'sqlite' }, async (t) => {
    const database = await createTestDatabase(t)
    await migrateToLatest(database.db, 'sample', migrations)
    let runs = 0
    // A deferred foreign key would fail the COMMIT; here the first caller ends the shared
    // transaction itself (as an error SQLite answers with a full rollback would).
    const results = await Promise.all([
      withTransaction(database, async (trx) => {
        runs++
        await trx.insertInto('notes').values({ id: 'first', body: 'x' }).execute()
        return 'first'
      }),
      withTransaction(database, async (trx) => {
        runs++
        await trx.insertInto('notes').values({ id: 'second', body: 'x' }).execute()
        if (runs === 2) {
          await sql`rollback`.execute(trx)
          throw new Error('the transaction is gone')
        }
        return 'second'
      }),
    ])
    assert.deepEqual(results, ['first', 'second'])
    assert.equal(runs, 4)
    assert.equal(await countNotes(database.db), 2)
  })
})
