import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../core/db/create-db.ts'
import type { EpersonsTable, GroupMembersTable, GroupsTable } from './modules/epersons/epersons.table.ts'
import type { HandoffsTable, OidcFlowsTable } from './modules/oidc/oidc.table.ts'
import type { SessionsTable } from './modules/sessions/sessions.table.ts'
import type { SettingsTable } from './modules/settings/settings.table.ts'
import type { LoginFailuresTable } from './modules/throttle/throttle.table.ts'

export interface AuthnTables {
  authn_settings: SettingsTable
  authn_epersons: EpersonsTable
  authn_groups: GroupsTable
  authn_group_members: GroupMembersTable
  authn_sessions: SessionsTable
  authn_login_failures: LoginFailuresTable
  authn_oidc_flows: OidcFlowsTable
  authn_handoffs: HandoffsTable
}

export type AuthnDb = Kysely<AuthnTables>
export type DbExecutor = Kysely<AuthnTables> | Transaction<AuthnTables>

export interface AuthnDatabase {
  db: AuthnDb
  dialect: Database['dialect']
}

export function authnDatabase(database: Database): AuthnDatabase {
  return { db: database.db as AuthnDb, dialect: database.dialect }
}
