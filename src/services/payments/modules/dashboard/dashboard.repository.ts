import type { DashboardSessionsTable, PaymentsDb } from '../../tables.ts'

// The dashboard's sessions (payments_dashboard_sessions): rows are found by the SHA-256 of the
// cookie's token, never by the token itself.

export async function insertSession(db: PaymentsDb, row: DashboardSessionsTable): Promise<void> {
  await db.insertInto('payments_dashboard_sessions').values(row).execute()
}

/** The app of a session that has not expired at `now`. */
export async function findSessionApp(db: PaymentsDb, tokenHash: string, now: string) {
  return db
    .selectFrom('payments_dashboard_sessions')
    .innerJoin('payments_apps', 'payments_apps.id', 'payments_dashboard_sessions.app_id')
    .select(['payments_apps.id as id', 'payments_apps.name as name', 'payments_apps.created as created', 'payments_dashboard_sessions.expires as expires'])
    .where('payments_dashboard_sessions.token_hash', '=', tokenHash)
    .where('payments_dashboard_sessions.expires', '>', now)
    .executeTakeFirst()
}

export async function deleteSession(db: PaymentsDb, tokenHash: string): Promise<void> {
  await db.deleteFrom('payments_dashboard_sessions').where('token_hash', '=', tokenHash).execute()
}

/** Drops one app's expired sessions (at each sign-in of that app, so a write stays with its app). */
export async function deleteExpiredSessionsOfApp(db: PaymentsDb, appId: string, now: string): Promise<void> {
  await db.deleteFrom('payments_dashboard_sessions').where('app_id', '=', appId).where('expires', '<=', now).execute()
}
