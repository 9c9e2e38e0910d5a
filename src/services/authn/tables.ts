import type { Kysely } from 'kysely'
import type { Database } from '../../core/db/create-db.ts'
import type { ModuleDatabase } from './db.ts'
import type { EpersonsTables } from './modules/epersons/index.ts'
import type { HandoffsTables } from './modules/handoffs/index.ts'
import type { OidcTables } from './modules/oidc/index.ts'
import type { PasskeysTables } from './modules/passkeys/index.ts'
import type { PersonalTokensTables } from './modules/personal-tokens/index.ts'
import type { SamlTables } from './modules/saml/index.ts'
import type { SessionsTables } from './modules/sessions/index.ts'
import type { SettingsTables } from './modules/settings/index.ts'
import type { ThrottleTables } from './modules/throttle/index.ts'

/** Every table of authn, each declared by the module that owns it. */
type AuthnTables = EpersonsTables & HandoffsTables & OidcTables & PasskeysTables & PersonalTokensTables & SamlTables & SessionsTables & SettingsTables & ThrottleTables

export type AuthnDatabase = ModuleDatabase<AuthnTables>

export function authnDatabase(database: Database): AuthnDatabase {
  return { db: database.db as Kysely<AuthnTables>, dialect: database.dialect }
}
