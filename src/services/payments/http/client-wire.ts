import type { FastifyInstance, FastifyReply } from 'fastify'
import fastJsonStringify, { type Schema } from 'fast-json-stringify'
import { installErrorHandling } from '../../../core/errors/error-handler.ts'
import { clientErrors, ClientErrorSchema, formatClientError } from './client-errors.ts'

/**
 * The wire rules of Paylike's client-side APIs, for one encapsulated scope:
 * - every JSON value ends with a newline (the clients read newline-delimited JSON and drop a
 *   last line without one), errors included;
 * - `Accept-Version: 1` is required on the JSON routes (VERSION_MISSING / VERSION_UNSUPPORTED);
 * - CORS is open to any origin, because these routes are called from shoppers' browsers on the
 *   merchant's site and carry no credentials. @fastify/cors is not used: its preflight route is
 *   `OPTIONS *` for the whole server, which would open the merchant API's preflights too.
 */
export function installClientWire(scope: FastifyInstance): void {
  installErrorHandling(scope, formatClientError, { notFound: false })
  // With CORS_ORIGINS set, the root's credentialed @fastify/cors would answer these routes'
  // preflights with its own origins and methods; `cors: false` leaves them to this scope.
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, cors: false }
  })
  scope.setSerializerCompiler(({ schema }) => {
    const serialize = fastJsonStringify(schema as Schema) as (data: unknown) => string
    return (data) => `${serialize(data)}\n`
  })
  scope.setReplySerializer((payload) => `${JSON.stringify(payload)}\n`)
  // Paylike also names the status code in a header, for clients that do not read the body.
  // Both hooks are callback style: they run on every client request, and need no promise.
  scope.addHook('onSend', function nameClientStatusCode(_request, reply, payload, done) {
    if (reply.statusCode >= 400 && typeof payload === 'string') {
      const code = /^\{[^\n]*?"code":"([A-Z_]+)"/.exec(payload)?.[1]
      if (code) reply.header('x-status-code', code)
    }
    done(null, payload)
  })
  scope.addHook('onRequest', function clientWireRules(request, reply, done) {
    reply.header('access-control-allow-origin', '*')
    reply.header('access-control-expose-headers', 'X-Request-Id, X-Status-Code')
    reply.header('vary', 'Origin')
    if (request.method === 'OPTIONS') return done()
    const config = request.routeOptions.config as { clientApi?: boolean } | undefined
    if (!config?.clientApi) return done()
    const version = request.headers['accept-version']
    const value = Array.isArray(version) ? version[0] : version
    if (value === undefined || value.trim() === '') return done(clientErrors.versionMissing())
    if (value.trim() !== '1') return done(clientErrors.versionUnsupported(value))
    done()
  })
}

/** The preflight answer for one client route (registered per path, never `OPTIONS *`). */
export function preflight(reply: FastifyReply) {
  return reply
    .code(204)
    .header('access-control-allow-methods', 'POST, OPTIONS')
    .header('access-control-allow-headers', 'Accept-Version, Content-Type, X-Client, Accept')
    .header('access-control-max-age', '86400')
    .send()
}

/** Route `config` of a versioned client JSON route; `public` skips the merchant API's Basic auth. */
export const CLIENT_ROUTE = { public: true, clientApi: true }

export const clientErrorResponses = {
  400: ClientErrorSchema,
  500: ClientErrorSchema,
}
