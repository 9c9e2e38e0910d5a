import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { createDb, type Database } from '../../src/core/db/create-db.ts'
import { type MigrationSet, migrateToLatest } from '../../src/core/db/migrator.ts'
import { testDatabaseUrl, testDialect } from '../helpers/build-app.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are written against no app schema.
type AnyDb = Kysely<any>

/** Each migration records that it ran, and the second takes its time: a race would show as two rows. */
const probeMigrations: MigrationSet = {
  '202601010000_create_probe': {
    up: async (db: AnyDb) => {
      await db.schema.createTable('probe').addColumn('migration', 'text', (col) => col.notNull()).execute()
      await db.insertInto('probe').values({ migration: 'first' }).execute()
    },
  },
  '202601010100_slow_step': {
    up: async (db: AnyDb) => {
      await sql`select pg_sleep(0.3)`.execute(db)
      await db.insertInto('probe').values({ migration: 'second' }).execute()
    },
  },
}

test(
  'instances starting together on one PostgreSQL database run each migration once',
  { skip: testDialect !== 'postgres' && 'PostgreSQL only: set TEST_DATABASE_URL (npm run test:pg)' },
  async (t) => {
    const schema = `test_${randomBytes(6).toString('hex')}`
    const instances: Database[] = []
    for (let index = 0; index < 4; index++) instances.push(await createDb(testDatabaseUrl, { schema, poolSize: 2 }))
    t.after(async () => {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(instances[0].db)
      await Promise.all(instances.map((instance) => instance.destroy()))
    })
    // Four processes' worth of migrators, each on its own pool, started in the same tick.
    const results = await Promise.all(instances.map((instance) => migrateToLatest(instance.db, 'probe', probeMigrations)))
    const ran = results.flatMap((result) => (result.results ?? []).filter((item) => item.status === 'Success').map((item) => item.migrationName))
    assert.deepEqual(ran.sort(), Object.keys(probeMigrations), 'each migration ran in exactly one instance')
    const rows = await instances[1].db.selectFrom('probe').select('migration').orderBy('migration').execute()
    assert.deepEqual(
      rows.map((row) => row.migration),
      ['first', 'second'],
    )
    const history = await instances[2].db.selectFrom('probe_migrations').select('name').execute()
    assert.equal(history.length, 2)
  },
)
