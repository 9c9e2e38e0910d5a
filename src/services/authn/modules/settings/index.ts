export { getOrCreateSetting } from './settings.repository.ts'
export { moveSigningSecretOutOfDatabase, signingKeyring, type SecretsLog } from './signing-secret.ts'
export type { SettingsTables } from './settings.table.ts'
