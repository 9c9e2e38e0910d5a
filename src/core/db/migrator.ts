import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely'

export type MigrationSet = Record<string, Migration>

/**
 * Runs one service's migrations to the latest version. Each service keeps its own history
 * table, so services can be deployed and migrated independently. Safe to run repeatedly and
 * from several instances at once (Kysely takes a lock table per history table).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen and typed against no app schema.
export async function migrateToLatest(db: Kysely<any>, service: string, migrations: MigrationSet): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${service}_migrations`,
    migrationLockTableName: `${service}_migrations_lock`,
  })
  const result = await migrator.migrateToLatest()
  if (result.error) {
    const failed = result.results?.find((item) => item.status === 'Error')
    const reason = result.error instanceof Error ? result.error.message : String(result.error)
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} of ${service} failed: ${reason}`, { cause: result.error })
  }
  return result
}
