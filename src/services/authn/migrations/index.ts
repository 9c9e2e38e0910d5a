import type { MigrationSet } from '../../../core/db/migrator.ts'
import * as createAuthnTables from './202611220040_create_authn_tables.ts'

/** Every migration of this service, by name; names sort in the order they run. Never edit one that has shipped. */
export const migrations: MigrationSet = {
  '202611220040_create_authn_tables': createAuthnTables,
}
