import type { Selectable } from 'kysely'
import type { EpersonsTables } from '../epersons/index.ts'

/**
 * A personal access token for scripts: only the SHA-256 of the secret is kept, and its last four
 * characters to tell tokens apart in a list. Revoked tokens stay (30 days) so that using one
 * gets "revoked", not "unknown".
 */
interface PersonalTokensTable {
  id: string
  eperson_uuid: string
  name: string
  token_hash: string
  token_hint: string
  /** `read` (GET and HEAD only) or `full`. */
  scope: string
  created_at: string
  expires_at: string
  /** Written at most once a minute per token and instance. */
  last_used_at: string | null
  revoked_at: string | null
}

export type PersonalTokenRow = Omit<Selectable<PersonalTokensTable>, 'token_hash'>

/**
 * The tables this module owns, and `authn_epersons` (owned by the epersons module), which the
 * lookup on every request joins for the account's state; read only, through explicit columns.
 */
export interface PersonalTokensTables extends Pick<EpersonsTables, 'authn_epersons'> {
  authn_personal_tokens: PersonalTokensTable
}
