import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: the root's @fastify/cors (CORS_ORIGINS) leaves the route to its scope's own CORS. */
    cors?: false
  }
}

export interface OpenCorsOptions {
  /** Origins allowed to read answers (`https://app.example.org`), or `['*']` for any. */
  origins: readonly string[]
  /** Methods a preflight allows. */
  methods: readonly string[]
  /** Request headers a preflight allows. */
  allowHeaders: readonly string[]
  /** Response headers a page may read besides the CORS-safelisted ones. */
  exposeHeaders: readonly string[]
  /** How long a browser may cache a preflight's answer. */
  maxAgeSeconds: number
}

/**
 * CORS without credentials for one encapsulated scope: an API that takes no cookies, called
 * from pages on other origins. Every answer of the scope (errors included, so a page can read
 * a 429) carries `Access-Control-Allow-Origin` for an allowed origin, and an `OPTIONS` on any
 * of its paths is answered 204 with the methods and headers it allows.
 *
 * The scope's routes are marked `cors: false`, which the root's credentialed @fastify/cors
 * (CORS_ORIGINS) honours: it neither adds its headers nor answers their preflights, so the
 * two never disagree about a path. Preflight routes are registered per path by the caller
 * (`preflightPaths`), never as `OPTIONS *`, so other services' preflights stay theirs.
 */
export function installOpenCors(scope: FastifyInstance, options: OpenCorsOptions & { preflightPaths: readonly string[] }): void {
  const any = options.origins.includes('*')
  const allowed = new Set(options.origins)
  const methods = options.methods.join(', ')
  const allowHeaders = options.allowHeaders.join(', ')
  const exposeHeaders = options.exposeHeaders.join(', ')

  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, cors: false }
  })

  scope.addHook('onRequest', function answerCorsOrigin(request, reply, done) {
    if (!any) reply.header('vary', 'Origin')
    const origin = request.headers.origin
    if (origin === undefined || (!any && !allowed.has(origin))) return done()
    reply.header('access-control-allow-origin', any ? '*' : origin)
    reply.header('access-control-expose-headers', exposeHeaders)
    done()
  })

  for (const url of options.preflightPaths) {
    scope.options(url, { schema: { hide: true } }, async (request, reply) => {
      if (request.headers['access-control-request-method'] !== undefined && reply.hasHeader('access-control-allow-origin')) {
        reply.header('access-control-allow-methods', methods)
        reply.header('access-control-allow-headers', allowHeaders)
        reply.header('access-control-max-age', String(options.maxAgeSeconds))
      }
      reply.header('allow', methods)
      return reply.code(204).send()
    })
  }
}
