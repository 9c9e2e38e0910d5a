import { lockForUpdate } from '../../../../core/db/transaction.ts'
import type { Executor, ModuleDatabase } from '../../db.ts'
import type { ThrottleTables } from './throttle.table.ts'

type DbExecutor = Executor<ThrottleTables>
type AuthnDatabase = ModuleDatabase<ThrottleTables>

export interface FailureRow {
  key: string
  failures: number
  last_failure_at: string
  blocked_until: string | null
}

export function findFailures(db: DbExecutor, keys: readonly string[]): Promise<FailureRow[]> {
  return db.selectFrom('authn_login_failures').select(['key', 'failures', 'last_failure_at', 'blocked_until']).where('key', 'in', keys).execute()
}

export function findFailureForUpdate(database: AuthnDatabase, db: DbExecutor, key: string): Promise<FailureRow | undefined> {
  return lockForUpdate(
    database.dialect,
    db.selectFrom('authn_login_failures').select(['key', 'failures', 'last_failure_at', 'blocked_until']).where('key', '=', key),
  ).executeTakeFirst()
}

export async function saveFailure(db: DbExecutor, row: FailureRow, exists: boolean): Promise<void> {
  if (exists) {
    await db
      .updateTable('authn_login_failures')
      .set({ failures: row.failures, last_failure_at: row.last_failure_at, blocked_until: row.blocked_until })
      .where('key', '=', row.key)
      .execute()
  } else {
    await db.insertInto('authn_login_failures').values(row).execute()
  }
}

export async function deleteFailures(db: DbExecutor, key: string): Promise<void> {
  await db.deleteFrom('authn_login_failures').where('key', '=', key).execute()
}

/** Housekeeping: rows whose failures are forgotten and whose block is over. */
export async function deleteStaleFailures(db: DbExecutor, forgottenBefore: string, now: string): Promise<void> {
  await db
    .deleteFrom('authn_login_failures')
    .where('last_failure_at', '<', forgottenBefore)
    .where((eb) => eb.or([eb('blocked_until', 'is', null), eb('blocked_until', '<', now)]))
    .execute()
}
