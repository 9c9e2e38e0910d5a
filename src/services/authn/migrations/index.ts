import type { MigrationSet } from '../../../core/db/migrator.ts'
import * as createAuthnTables from './202611220040_create_authn_tables.ts'
import * as addDevicesTokensPasskeys from './202611251900_add_devices_tokens_passkeys.ts'
import * as addSaml from './202611281400_add_saml.ts'
import * as addSamlNameIds from './202611281440_add_saml_name_ids.ts'

/** Every migration of this service, by name; names sort in the order they run. Never edit one that has shipped. */
export const migrations: MigrationSet = {
  '202611220040_create_authn_tables': createAuthnTables,
  '202611251900_add_devices_tokens_passkeys': addDevicesTokensPasskeys,
  '202611281400_add_saml': addSaml,
  '202611281440_add_saml_name_ids': addSamlNameIds,
}
