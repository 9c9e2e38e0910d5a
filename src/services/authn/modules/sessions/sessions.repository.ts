import { lockForUpdate } from '../../../../core/db/transaction.ts'
import { CREDENTIAL_OWNER_COLUMNS, type CredentialOwner, type Executor, type ModuleDatabase } from '../../db.ts'
import type { SessionRow, SessionsTables } from './sessions.table.ts'

type DbExecutor = Executor<SessionsTables>
type AuthnDatabase = ModuleDatabase<SessionsTables>

const SESSION_COLUMNS = [
  'authn_sessions.id',
  'authn_sessions.eperson_uuid',
  'authn_sessions.method',
  'authn_sessions.special_groups',
  'authn_sessions.created_at',
  'authn_sessions.expires_at',
  'authn_sessions.current_jti',
  'authn_sessions.current_iat',
  'authn_sessions.current_exp',
  'authn_sessions.previous_jti',
  'authn_sessions.previous_valid_until',
  'authn_sessions.device',
  'authn_sessions.ip',
  'authn_sessions.last_seen_at',
] as const

/** A session and the account state that decides whether its tokens still count. */
export type SessionWithEperson = SessionRow & CredentialOwner

/** The one query on the path of every authenticated request (then cached briefly). */
export function findSessionWithEperson(db: DbExecutor, id: string): Promise<SessionWithEperson | undefined> {
  return db
    .selectFrom('authn_sessions')
    .innerJoin('authn_epersons', 'authn_epersons.uuid', 'authn_sessions.eperson_uuid')
    .select([...SESSION_COLUMNS, ...CREDENTIAL_OWNER_COLUMNS])
    .where('authn_sessions.id', '=', id)
    .executeTakeFirst()
}

export function findSessionForUpdate(database: AuthnDatabase, db: DbExecutor, id: string): Promise<SessionRow | undefined> {
  return lockForUpdate(database.dialect, db.selectFrom('authn_sessions').select(SESSION_COLUMNS).where('authn_sessions.id', '=', id)).executeTakeFirst()
}

export async function insertSession(db: DbExecutor, row: SessionRow): Promise<void> {
  await db.insertInto('authn_sessions').values(row).execute()
}

/** Moves the session to a new current token, keeping the old one as previous; false if another refresh got there first. */
export async function rotateSession(
  db: DbExecutor,
  id: string,
  expectedJti: string,
  next: { jti: string; iat: number; exp: number; previousValidUntil: string; seenAt: string },
): Promise<boolean> {
  const result = await db
    .updateTable('authn_sessions')
    .set({
      previous_jti: expectedJti,
      previous_valid_until: next.previousValidUntil,
      current_jti: next.jti,
      current_iat: next.iat,
      current_exp: next.exp,
      last_seen_at: next.seenAt,
    })
    .where('id', '=', id)
    .where('current_jti', '=', expectedJti)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function deleteSessionsOf(db: DbExecutor, epersonUuid: string): Promise<number> {
  const result = await db.deleteFrom('authn_sessions').where('eperson_uuid', '=', epersonUuid).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Housekeeping: an eperson's sessions past their absolute end can never be used again. */
export async function deleteExpiredSessionsOf(db: DbExecutor, epersonUuid: string, now: string): Promise<number> {
  const result = await db.deleteFrom('authn_sessions').where('eperson_uuid', '=', epersonUuid).where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

export function findSession(db: DbExecutor, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('authn_sessions').select(SESSION_COLUMNS).where('authn_sessions.id', '=', id).executeTakeFirst()
}

/** One page of an eperson's live sessions, the newest first. */
export function listLiveSessionsOf(db: DbExecutor, epersonUuid: string, now: string, limit: number, offset: number): Promise<SessionRow[]> {
  return db
    .selectFrom('authn_sessions')
    .select(SESSION_COLUMNS)
    .where('eperson_uuid', '=', epersonUuid)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute()
}

export async function countLiveSessionsOf(db: DbExecutor, epersonUuid: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('authn_sessions')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('eperson_uuid', '=', epersonUuid)
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(row?.count ?? 0)
}

/** Deletes one session of an eperson (the owner named too, so the statement stays on the eperson's shard). */
export async function deleteSession(db: DbExecutor, epersonUuid: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('authn_sessions').where('eperson_uuid', '=', epersonUuid).where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Records use of a session, unless another request (or instance) recorded it after `notSince`. */
export async function touchSession(db: DbExecutor, id: string, now: string, notSince: string): Promise<void> {
  await db
    .updateTable('authn_sessions')
    .set({ last_seen_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<=', notSince)]))
    .execute()
}
