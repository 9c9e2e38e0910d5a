import type { Executor } from '../../db.ts'
import type { ChallengeRow, PasskeyRow, PasskeysTables } from './passkeys.table.ts'

type DbExecutor = Executor<PasskeysTables>

const PASSKEY_COLUMNS = [
  'id',
  'eperson_uuid',
  'name',
  'public_key',
  'counter',
  'transports',
  'device_type',
  'backed_up',
  'created_at',
  'last_used_at',
] as const

export async function insertPasskey(db: DbExecutor, row: PasskeyRow): Promise<void> {
  await db.insertInto('authn_passkeys').values(row).execute()
}

export function findPasskey(db: DbExecutor, id: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('authn_passkeys').select(PASSKEY_COLUMNS).where('id', '=', id).executeTakeFirst()
}

/** One page of an eperson's passkeys, the newest first. */
export function listPasskeysOf(db: DbExecutor, epersonUuid: string, limit: number, offset: number): Promise<PasskeyRow[]> {
  return db
    .selectFrom('authn_passkeys')
    .select(PASSKEY_COLUMNS)
    .where('eperson_uuid', '=', epersonUuid)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute()
}

export async function countPasskeysOf(db: DbExecutor, epersonUuid: string): Promise<number> {
  const row = await db
    .selectFrom('authn_passkeys')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('eperson_uuid', '=', epersonUuid)
    .executeTakeFirst()
  return Number(row?.count ?? 0)
}

export async function deletePasskey(db: DbExecutor, epersonUuid: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('authn_passkeys').where('eperson_uuid', '=', epersonUuid).where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/**
 * Records a login with the passkey. The counter moves only forward: the conditional update makes
 * two logins racing with the same counter value count once (the second is refused).
 */
export async function recordPasskeyUse(db: DbExecutor, id: string, previousCounter: number, counter: number, now: string): Promise<boolean> {
  const result = await db
    .updateTable('authn_passkeys')
    .set({ counter, last_used_at: now })
    .where('id', '=', id)
    .where('counter', '=', previousCounter)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function insertChallenge(db: DbExecutor, row: ChallengeRow): Promise<void> {
  await db.insertInto('authn_webauthn_challenges').values(row).execute()
}

/** Reads and deletes a challenge: the conditional delete makes a replayed ceremony fail. */
export async function takeChallenge(db: DbExecutor, challengeHash: string): Promise<ChallengeRow | undefined> {
  const row = await db
    .selectFrom('authn_webauthn_challenges')
    .select(['challenge_hash', 'purpose', 'eperson_uuid', 'expires_at'])
    .where('challenge_hash', '=', challengeHash)
    .executeTakeFirst()
  if (!row) return undefined
  const deleted = await db.deleteFrom('authn_webauthn_challenges').where('challenge_hash', '=', challengeHash).executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0 ? row : undefined
}

export async function deleteExpiredChallenges(db: DbExecutor, now: string): Promise<void> {
  await db.deleteFrom('authn_webauthn_challenges').where('expires_at', '<=', now).execute()
}
