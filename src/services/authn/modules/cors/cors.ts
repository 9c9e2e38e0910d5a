import type { FastifyInstance, FastifyRequest } from 'fastify'
import { authnErrors } from '../../errors.ts'

// DSpace's lists (WebApplication.java), so dspace-angular's requests pass preflight unchanged.
const ALLOWED_HEADERS = 'Accept, Authorization, Content-Type, Origin, X-On-Behalf-Of, X-Requested-With, X-XSRF-TOKEN, X-CORRELATION-ID, X-REFERRER'
const EXPOSED_HEADERS = 'Authorization, DSPACE-XSRF-TOKEN, Location, WWW-Authenticate'
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'

function sameOrigin(request: FastifyRequest, origin: string): boolean {
  return origin === `${request.protocol}://${request.host}`
}

/**
 * CORS with credentials for the origins of AUTHN_ALLOWED_ORIGINS (plus the server's own). A
 * request from any other origin is refused with 403 before authentication, as in DSpace, for
 * GET too: a browser would send it with the user's cookies.
 */
export function installCors(scope: FastifyInstance, options: { allowedOrigins: readonly string[] }): void {
  const allowed = new Set(options.allowedOrigins)

  scope.addHook('onRequest', function checkCorsOrigin(request, reply, done) {
    const origin = request.headers.origin
    if (origin === undefined) return done()
    if (!allowed.has(origin) && !sameOrigin(request, origin)) return done(authnErrors.invalidCors())
    reply.header('access-control-allow-origin', origin)
    reply.header('access-control-allow-credentials', 'true')
    reply.header('access-control-expose-headers', EXPOSED_HEADERS)
    reply.header('vary', 'Origin')
    done()
  })

  scope.route({
    method: 'OPTIONS',
    url: '/*',
    schema: { hide: true },
    handler: async (request, reply) => {
      if (request.headers.origin !== undefined) {
        reply.header('access-control-allow-methods', ALLOWED_METHODS)
        reply.header('access-control-allow-headers', ALLOWED_HEADERS)
        reply.header('access-control-max-age', '3600')
      }
      return reply.status(204).send()
    },
  })
}
