export { passkeysRoutes } from './passkeys.routes.ts'
export { toPasskeyResponse } from './passkeys.schemas.ts'
export { createPasskeysService, PASSKEY_METHOD } from './passkeys.service.ts'
export type { PasskeysTables } from './passkeys.table.ts'
