import { CREDENTIAL_OWNER_COLUMNS, type CredentialOwner, type Executor } from '../../db.ts'
import type { PersonalTokenRow, PersonalTokensTables } from './personal-tokens.table.ts'

type DbExecutor = Executor<PersonalTokensTables>

// Never the hash: it is compared in the WHERE clause only.
const TOKEN_COLUMNS = [
  'authn_personal_tokens.id',
  'authn_personal_tokens.eperson_uuid',
  'authn_personal_tokens.name',
  'authn_personal_tokens.token_hint',
  'authn_personal_tokens.scope',
  'authn_personal_tokens.created_at',
  'authn_personal_tokens.expires_at',
  'authn_personal_tokens.last_used_at',
  'authn_personal_tokens.revoked_at',
] as const

/** A token with the account state that decides whether it still counts (same names as a session's). */
export type TokenWithEperson = PersonalTokenRow & CredentialOwner

export async function insertToken(db: DbExecutor, row: PersonalTokenRow & { token_hash: string }): Promise<void> {
  await db.insertInto('authn_personal_tokens').values(row).execute()
}

/** The one query of a request made with a personal access token (then cached briefly). */
export function findTokenByHash(db: DbExecutor, tokenHash: string): Promise<TokenWithEperson | undefined> {
  return db
    .selectFrom('authn_personal_tokens')
    .innerJoin('authn_epersons', 'authn_epersons.uuid', 'authn_personal_tokens.eperson_uuid')
    .select([...TOKEN_COLUMNS, ...CREDENTIAL_OWNER_COLUMNS])
    .where('authn_personal_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst()
}

export function findToken(db: DbExecutor, id: string): Promise<PersonalTokenRow | undefined> {
  return db.selectFrom('authn_personal_tokens').select(TOKEN_COLUMNS).where('id', '=', id).executeTakeFirst()
}

export function findTokenOf(db: DbExecutor, epersonUuid: string, id: string): Promise<PersonalTokenRow | undefined> {
  return db.selectFrom('authn_personal_tokens').select(TOKEN_COLUMNS).where('eperson_uuid', '=', epersonUuid).where('id', '=', id).executeTakeFirst()
}

/** One page of an eperson's tokens, the newest first (revoked and expired ones included until swept). */
export function listTokensOf(db: DbExecutor, epersonUuid: string, limit: number, offset: number): Promise<PersonalTokenRow[]> {
  return db
    .selectFrom('authn_personal_tokens')
    .select(TOKEN_COLUMNS)
    .where('eperson_uuid', '=', epersonUuid)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute()
}

export async function countTokensOf(db: DbExecutor, epersonUuid: string): Promise<number> {
  const row = await db
    .selectFrom('authn_personal_tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('eperson_uuid', '=', epersonUuid)
    .executeTakeFirst()
  return Number(row?.count ?? 0)
}

/** Marks a token of an eperson revoked; false when it already was. */
export async function revokeToken(db: DbExecutor, epersonUuid: string, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('authn_personal_tokens')
    .set({ revoked_at: now })
    .where('eperson_uuid', '=', epersonUuid)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Records use of a token, unless another request (or instance) recorded it after `notSince`. */
export async function touchToken(db: DbExecutor, id: string, now: string, notSince: string): Promise<void> {
  await db
    .updateTable('authn_personal_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', notSince)]))
    .execute()
}

/** Housekeeping: an eperson's tokens expired or revoked before `before` are forgotten. */
export async function deleteDeadTokensOf(db: DbExecutor, epersonUuid: string, before: string): Promise<void> {
  await db
    .deleteFrom('authn_personal_tokens')
    .where('eperson_uuid', '=', epersonUuid)
    .where((eb) => eb.or([eb('expires_at', '<=', before), eb('revoked_at', '<=', before)]))
    .execute()
}
