export { createPasskeysService, PASSKEY_METHOD, type PasskeysService } from './passkeys.service.ts'
export type { PasskeyRow, PasskeysTables } from './passkeys.table.ts'
