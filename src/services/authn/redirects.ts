import type { FastifyRequest } from 'fastify'

/**
 * Where the service may send a browser after a federated login or a logout: the server's own
 * host name, or one of AUTHN_ALLOWED_ORIGINS (DSpace's rule for `redirectUrl`), and only over http(s).
 * A relative path stays on the server and is allowed.
 */
export function createRedirectGuard(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins)
  return (request: FastifyRequest, target: string): boolean => {
    if (target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/\\')) return true
    let url: URL
    try {
      url = new URL(target)
    } catch {
      return false
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
    return url.hostname === request.hostname || allowed.has(url.origin)
  }
}

export type RedirectGuard = ReturnType<typeof createRedirectGuard>
