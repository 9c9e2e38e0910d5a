import type { ExpressionBuilder } from 'kysely'
import type { DashboardLinksTable, DashboardSessionsTable, DashboardUserSessionsTable, PaymentsDb, PaymentsTables } from '../../tables.ts'

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

// Merchant users' sign-in (issue 30): one-time links and the sessions they open. The users and
// their memberships are the merchants module's tables, read here (as the app-key sessions read
// payments_apps) and never written.

/** The row's user (payments_users) is a member of some merchant. */
function memberOfSomeMerchant(eb: ExpressionBuilder<PaymentsTables, 'payments_users'>) {
  return eb.exists(eb.selectFrom('payments_merchant_users').select('user_id').whereRef('payments_merchant_users.user_id', '=', 'payments_users.id'))
}

/** A merchant user of this e-mail (stored lower-case) who is still a member of some merchant. */
export async function findMemberUserByEmail(db: PaymentsDb, email: string) {
  return db
    .selectFrom('payments_users')
    .select(['payments_users.id as id', 'payments_users.email as email'])
    .where('payments_users.email', '=', email)
    .where(memberOfSomeMerchant)
    .executeTakeFirst()
}

export async function insertLink(db: PaymentsDb, row: DashboardLinksTable): Promise<void> {
  await db.insertInto('payments_dashboard_links').values(row).execute()
}

/**
 * Marks the link used if it is unused and unexpired at `now`, and answers its user while still a
 * member of some merchant. The conditional update is what makes a link single-use under
 * concurrent follows, on every instance.
 */
export async function useLink(db: PaymentsDb, tokenHash: string, now: string) {
  const used = await db
    .updateTable('payments_dashboard_links')
    .set({ used: now })
    .where('token_hash', '=', tokenHash)
    .where('used', 'is', null)
    .where('expires', '>', now)
    .returning('user_id')
    .executeTakeFirst()
  return used && findMemberUser(db, used.user_id)
}

/** The merchant user of this id while they are a member of some merchant. */
export async function findMemberUser(db: PaymentsDb, userId: string) {
  return db
    .selectFrom('payments_users')
    .select(['payments_users.id as id', 'payments_users.email as email'])
    .where('payments_users.id', '=', userId)
    .where(memberOfSomeMerchant)
    .executeTakeFirst()
}

/** Drops one user's expired links and sessions (at each link they are sent, so rows do not pile up). */
export async function deleteExpiredOfUser(db: PaymentsDb, userId: string, now: string): Promise<void> {
  await db.deleteFrom('payments_dashboard_links').where('user_id', '=', userId).where('expires', '<=', now).execute()
  await db.deleteFrom('payments_dashboard_user_sessions').where('user_id', '=', userId).where('expires', '<=', now).execute()
}

export async function insertUserSession(db: PaymentsDb, row: DashboardUserSessionsTable): Promise<void> {
  await db.insertInto('payments_dashboard_user_sessions').values(row).execute()
}

/** The user of a session that has not expired at `now`, while they are a member of some merchant (a user removed from the last one is signed out). */
export async function findSessionUser(db: PaymentsDb, tokenHash: string, now: string) {
  return db
    .selectFrom('payments_dashboard_user_sessions')
    .innerJoin('payments_users', 'payments_users.id', 'payments_dashboard_user_sessions.user_id')
    .select(['payments_users.id as id', 'payments_users.email as email', 'payments_users.created as created', 'payments_dashboard_user_sessions.expires as expires'])
    .where('payments_dashboard_user_sessions.token_hash', '=', tokenHash)
    .where('payments_dashboard_user_sessions.expires', '>', now)
    .where(memberOfSomeMerchant)
    .executeTakeFirst()
}

export async function deleteUserSession(db: PaymentsDb, tokenHash: string): Promise<void> {
  await db.deleteFrom('payments_dashboard_user_sessions').where('token_hash', '=', tokenHash).execute()
}
