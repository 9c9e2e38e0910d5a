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
