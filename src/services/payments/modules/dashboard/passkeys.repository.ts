import type { DashboardChallengesTable, DashboardPasskeysTable, PaymentsDb } from '../../tables.ts'

// Merchant users' passkeys and the challenges of their ceremonies (payments_dashboard_passkeys,
// payments_dashboard_challenges). PostgreSQL answers the bigint counter as a string: Number().

const PASSKEY_COLUMNS = ['id', 'user_id', 'name', 'public_key', 'counter', 'transports', 'created', 'last_used'] as const

export async function insertPasskey(db: PaymentsDb, row: DashboardPasskeysTable): Promise<void> {
  await db.insertInto('payments_dashboard_passkeys').values(row).execute()
}

export async function findPasskey(db: PaymentsDb, id: string): Promise<DashboardPasskeysTable | undefined> {
  const row = await db.selectFrom('payments_dashboard_passkeys').select(PASSKEY_COLUMNS).where('id', '=', id).executeTakeFirst()
  return row && { ...row, counter: Number(row.counter) }
}

export async function listPasskeysOf(db: PaymentsDb, userId: string): Promise<DashboardPasskeysTable[]> {
  const rows = await db.selectFrom('payments_dashboard_passkeys').select(PASSKEY_COLUMNS).where('user_id', '=', userId).orderBy('created').limit(50).execute()
  return rows.map((row) => ({ ...row, counter: Number(row.counter) }))
}

/** Deletes the passkey if it is this user's; answers whether it did (another user's is left alone). */
export async function deletePasskeyOf(db: PaymentsDb, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('payments_dashboard_passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Records a sign-in with the passkey; the counter moves only forward (two racing sign-ins with one counter value count once). */
export async function recordPasskeyUse(db: PaymentsDb, id: string, previousCounter: number, counter: number, now: string): Promise<boolean> {
  const result = await db
    .updateTable('payments_dashboard_passkeys')
    .set({ counter, last_used: now })
    .where('id', '=', id)
    .where('counter', '=', previousCounter)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function insertChallenge(db: PaymentsDb, row: DashboardChallengesTable): Promise<void> {
  await db.insertInto('payments_dashboard_challenges').values(row).execute()
}

/** Deletes the challenge and answers it if this call deleted it: a replayed ceremony finds none. */
export async function takeChallenge(db: PaymentsDb, challengeHash: string): Promise<DashboardChallengesTable | undefined> {
  return db
    .deleteFrom('payments_dashboard_challenges')
    .where('challenge_hash', '=', challengeHash)
    .returning(['challenge_hash', 'purpose', 'user_id', 'expires'])
    .executeTakeFirst()
}

export async function deleteExpiredChallenges(db: PaymentsDb, now: string): Promise<void> {
  await db.deleteFrom('payments_dashboard_challenges').where('expires', '<=', now).execute()
}
