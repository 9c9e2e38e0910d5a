export type { SessionWithEperson } from './sessions.repository.ts'
export type { SessionsTables } from './sessions.table.ts'
export { createTokenService, type TokenClaims, type TokenService, type ValidatedToken } from './tokens.service.ts'
