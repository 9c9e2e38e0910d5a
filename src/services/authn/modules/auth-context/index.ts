export type { AuthnContext } from './auth-context.ts'
export { bearerToken, installAuthentication } from './authenticate.ts'
export { credentialsCaller, requestActor } from './guards.ts'
