import type { PublicEpersonRow } from '../epersons/index.ts'
import type { TokenClaims } from '../sessions/index.ts'

/** Who a request runs as, worked out once per request by the authentication hook. */
export interface AuthnContext {
  /** The effective user: the token's eperson, or the one named by X-On-Behalf-Of. */
  eperson?: PublicEpersonRow
  /** The administrator behind the request while acting on behalf of someone else. */
  realEperson?: PublicEpersonRow
  /** How the request was authenticated: a login token, a short-lived token, or a personal access token. */
  tokenKind?: 'login' | 'shortLived' | 'personal'
  claims?: TokenClaims
  /**
   * The cached session (or personal access token) row the request was authenticated with (none
   * while acting on behalf of someone): a new object whenever the row is read again, so what is
   * rendered from it may be reused for exactly as long as the row itself is.
   */
  sessionSnapshot?: object
  method?: string
  /** Special groups of this request: the token's `sg` plus the groups of the client address. */
  specialGroups: string[]
  /** Special groups granted by the client address alone. */
  ipGroups: string[]
  /** The client's address (X-Forwarded-For honoured from trusted proxies only), worked out on first read. */
  readonly clientAddress: string
}

declare module 'fastify' {
  interface FastifyRequest {
    authnContext: AuthnContext
  }
}
