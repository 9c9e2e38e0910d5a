import type { MigrationSet } from '../../../core/db/migrator.ts'

/** Every migration of this service, by name; names sort in the order they run. Never edit one that has shipped. */
export const migrations: MigrationSet = {}
