import { setTimeout as sleep } from 'node:timers/promises'
import { type Kysely, type Migration, type MigrationResultSet, Migrator, PostgresAdapter, sql } from 'kysely'
import { withoutNamedStatements } from './named-statements.ts'

export type MigrationSet = Record<string, Migration>

/**
 * Runs one service's migrations to the latest version. Each service keeps its own history
 * table, so services can be deployed and migrated independently. Safe to run repeatedly and
 * from several instances at once: on PostgreSQL Kysely holds a session-level advisory lock
 * (`pg_advisory_lock`, one key for every history table) while it reads the history and runs the
 * pending migrations in one transaction, so an instance that starts while another migrates
 * waits, then finds nothing left to do (test/core/migrate-race.test.ts). Its statements go
 * unnamed: none is worth a plan, and DDL changes what a plan of one would return.
 */
export function migrateToLatest(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen and typed against no app schema.
  db: Kysely<any>,
  service: string,
  migrations: MigrationSet,
  options: { onApplied?: (name: string) => void } = {},
): Promise<MigrationResultSet> {
  return withoutNamedStatements(() => migrate(db, service, migrations, options))
}

async function migrate(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen and typed against no app schema.
  db: Kysely<any>,
  service: string,
  migrations: MigrationSet,
  options: { onApplied?: (name: string) => void } = {},
): Promise<MigrationResultSet> {
  const { onApplied } = options
  // Each migration reports once it has run (inside the transaction, before the commit).
  const reported = onApplied
    ? Object.fromEntries(Object.entries(migrations).map(([name, migration]) => [name, { ...migration, up: async (on: Kysely<unknown>) => (await migration.up(on), onApplied(name)) }]))
    : migrations
  const migrator = await migratorFor(db, service, reported)
  let result = await migrator.migrateToLatest()
  // Kysely's existence checks read the catalogue of every schema; a schema or table dropped
  // meanwhile by someone else (tests drop theirs when done) fails that read (invalid schema,
  // undefined table or column) before any migration ran, so running again is safe.
  for (let attempt = 1; attempt < 5 && result.error && result.results === undefined && isCatalogueRace(result.error); attempt++) {
    await sleep(20 * attempt)
    result = await migrator.migrateToLatest()
  }
  if (result.error) {
    const failed = result.results?.find((item) => item.status === 'Error')
    const reason = result.error instanceof Error ? result.error.message : String(result.error)
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} of ${service} failed: ${reason}`, { cause: result.error })
  }
  return result
}

/** How many of the service's migrations have not run on `db` yet. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above.
export async function pendingMigrations(db: Kysely<any>, service: string, migrations: MigrationSet): Promise<number> {
  const known = await (await migratorFor(db, service, migrations)).getMigrations()
  return known.filter((migration) => migration.executedAt === undefined).length
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above.
async function migratorFor(db: Kysely<any>, service: string, migrations: MigrationSet): Promise<Migrator> {
  // Kysely looks for its history table in every schema unless told which one: on PostgreSQL a
  // same-named table in another schema (another app, or another test's schema) would be taken
  // for ours and the migrations would never run. Pin it to the schema we work in.
  const migrationTableSchema =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema,
    migrationTableName: `${service}_migrations`,
    migrationLockTableName: `${service}_migrations_lock`,
  })
}

const CATALOGUE_RACE_CODES = new Set(['3F000', '42P01', '42703', 'XX000'])

function isCatalogueRace(error: unknown): boolean {
  return typeof error === 'object' && error !== null && CATALOGUE_RACE_CODES.has(String((error as { code?: unknown }).code))
}
