// The card vault: tokens for card numbers and security codes, sealed card numbers, vault keys.
export { luhnValid, schemeOf, type SchemeName, TEST_CARD_NUMBERS } from './cards.ts'
export { createSealer, type Sealer } from './vault.crypto.ts'
export { vaultKeyring } from './vault.keys.ts'
export { keyUsage, resealAll, retireRefusal } from './vault.rotation.ts'
export { vaultRoutes } from './vault.routes.ts'
export { createVaultService, type VaultService } from './vault.service.ts'
export type { VaultDb } from './vault.table.ts'
