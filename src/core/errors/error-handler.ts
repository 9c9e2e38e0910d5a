import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isAppError } from './app-error.ts'
import { coreError } from './codes.ts'
import { setContextFormatter } from './error-owners.ts'
import { type ErrorBodyFormatter, normalizeError } from './normalize.ts'

export type { ErrorBodyFormatter }

/**
 * Installs the error and not-found handlers of one encapsulation context (the root, or one
 * service's plugin). Every error goes through normalizeError, so all services agree on which
 * status an error gets and on never leaking a 5xx's internals; only the body differs.
 */
export function installErrorHandling(app: FastifyInstance, formatBody: ErrorBodyFormatter, options: { notFound?: boolean } = {}): void {
  setContextFormatter(app, formatBody)
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, formatBody))

  // Fastify allows one not-found handler per route prefix; a service mounted at the root
  // (payments) leaves it to the root's.
  if (options.notFound === false) return
  app.setNotFoundHandler((request, reply) => sendError(noRoute(request), request, reply, formatBody))
}

export function noRoute(request: FastifyRequest) {
  return coreError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`)
}

/** Logs any error as its kind deserves (5xx with its stack, client errors at info) and answers it in `formatBody`'s shape. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, formatBody: ErrorBodyFormatter) {
  const normalized = normalizeError(error)
  if (normalized.internal) {
    request.log.error({ err: error, route: request.routeOptions?.url }, 'request failed')
  } else if (normalized.status >= 500 && !isAppError(error)) {
    // A dependency's fault (the database down, a full disk): the operator needs its cause.
    request.log.warn({ err: error, code: normalized.code, status: normalized.status, route: request.routeOptions?.url }, normalized.message)
  } else {
    request.log.info({ code: normalized.code, status: normalized.status }, normalized.message)
  }
  if (normalized.headers) reply.headers(normalized.headers)
  return reply.status(normalized.status).type('application/json; charset=utf-8').send(formatBody(normalized, request))
}
