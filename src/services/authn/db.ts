import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../core/db/create-db.ts'

/**
 * The database as one module sees it: only its own tables (`Tables`), so a repository cannot
 * reach another module's storage by accident. `tables.ts` composes every module's tables into
 * the one database the service opens; a `ModuleDatabase<AuthnTables>` is one of each module's.
 */
export interface ModuleDatabase<Tables> {
  db: Kysely<Tables>
  dialect: Database['dialect']
}

export type Executor<Tables> = Kysely<Tables> | Transaction<Tables>

/**
 * The account columns read with a credential (a session or a personal access token): it counts
 * only while its eperson may log in, and the answer names who it is.
 */
export const CREDENTIAL_OWNER_COLUMNS = [
  'authn_epersons.email',
  'authn_epersons.can_log_in',
  'authn_epersons.first_name',
  'authn_epersons.last_name',
  'authn_epersons.created_at as eperson_created_at',
  'authn_epersons.last_active',
] as const

/** What `CREDENTIAL_OWNER_COLUMNS` read. */
export interface CredentialOwner {
  email: string
  can_log_in: number
  first_name: string | null
  last_name: string | null
  eperson_created_at: string
  last_active: string | null
}
