export type { SessionWithEperson } from './sessions.repository.ts'
export { createSessionsService, type SessionsService } from './sessions.service.ts'
export type { SessionRow, SessionsTables } from './sessions.table.ts'
export { createTokenService, type LoginClient, type TokenClaims, type TokenService, type ValidatedToken } from './tokens.service.ts'
