import cors from '@fastify/cors'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify'
import { randomUUID } from 'node:crypto'
import { withRequestDatabaseBudget } from '../db/deadline.ts'
import { type ErrorBodyFormatter, noRoute, sendError } from '../errors/error-handler.ts'
import { createErrorOwners, setContextFormatter } from '../errors/error-owners.ts'
import { registerBodyParsers } from './form-body.ts'
import { loggerOptions, redactUrl } from './logger.ts'
import { clientErrorHandler } from './client-errors.ts'
import { MAX_IDENTIFIER_LENGTH } from './identifiers.ts'
import { registerOpenApi } from './openapi.ts'
import { guardedValidators } from './validation.ts'

export interface ServerOptions {
  logLevel: string
  /** Pretty, human-readable logs (the default when stdout is a terminal). */
  prettyLogs?: boolean
  trustProxy: true | string[]
  corsOrigins: string[]
  version: string
  description: string
  /** Where log lines go instead of the standard output. */
  logStream?: NodeJS.WritableStream
  /** Named string formats for schemas (`format: 'iban'`), contributed by the services. */
  formats?: Record<string, (value: string) => boolean>
  /** The body of errors on paths no service's routes claim; the core's own by default. */
  unclaimedErrorBody?: ErrorBodyFormatter
}

/** The core's own error body, for paths no service owns. */
export const coreErrorBody: ErrorBodyFormatter = (error, request) => ({
  error: {
    code: error.code,
    message: error.message,
    requestId: request.id,
    ...(error.validation ? { details: error.validation } : error.details === undefined ? {} : { details: error.details }),
  },
})

const INCOMING_REQUEST_ID = /^[\w.:-]{1,128}$/

/**
 * The Fastify instance every service is mounted on: request ids (an incoming X-Request-Id is
 * kept when it looks sane), one log line per request, JSON and form bodies, OpenAPI, CORS and
 * the root error handler. Services add their own routes, error bodies and CORS rules.
 */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  // Errors Fastify raises before routing (a bad URL, an over-long path parameter) and paths no
  // route matches are answered in the shape of the service the path belongs to.
  const owners = createErrorOwners()
  const unclaimed = options.unclaimedErrorBody ?? coreErrorBody
  const bodyForPath = (path: string) => owners.formatterFor(path) ?? unclaimed
  const bodyFor = (request: FastifyRequest) => bodyForPath(request.url.split('?')[0] ?? '')
  const app = Fastify({
    logger: loggerOptions(options.logLevel, options.prettyLogs ?? false, options.logStream),
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id']
      return typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    trustProxy: options.trustProxy === true ? true : options.trustProxy.length > 0 ? options.trustProxy : false,
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false, formats: options.formats ?? {} } },
    schemaController: { compilersFactory: { buildValidator: guardedValidators() } },
    routerOptions: { maxParamLength: MAX_IDENTIFIER_LENGTH },
    // Plugins and onReady hooks may take this long (Fastify's default is 10 s): the avatar's
    // speech threads warm in onReady, for up to WARM_WAIT_MS on a loaded machine. The start is
    // visible meanwhile: the port holder answers `/readyz` 503 `services starting`.
    pluginTimeout: 45_000,
    frameworkErrors: (error, request, reply) => sendError(error, request, reply.header('x-request-id', request.id), bodyFor(request)),
    clientErrorHandler: clientErrorHandler(bodyForPath),
    // While stopping, requests on connections opened before are still answered (with
    // `Connection: close`), not refused: the database stays open until every connection ends.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>()
  owners.track(app as unknown as FastifyInstance)
  // The root's own routes (/healthz, /readyz, /docs) answer errors as paths no service owns.
  setContextFormatter(app as unknown as FastifyInstance, unclaimed)
  // The root's handlers also see requests no route matched (their bodies fail to parse before
  // the not-found handler runs): those are answered by the path's owner too.
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, bodyFor(request)))
  app.setNotFoundHandler((request, reply) => sendError(noRoute(request), request, reply, bodyFor(request)))

  // These two run on every request: callback style, so they cost no promise and no microtask.
  app.addHook('onRequest', function startRequest(request, reply, done) {
    reply.header('x-request-id', request.id)
    // Each use of the database in a request ends in time for a 503 to be its answer.
    withRequestDatabaseBudget(done)
  })
  // One line per request, written when the response is done (Fastify's default writes two).
  app.addHook('onResponse', function logRequestCompleted(request, reply, done) {
    request.log.info(
      { method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: request.ip },
      'request completed',
    )
    done()
  })

  await registerBodyParsers(app)
  await registerOpenApi(app, { version: options.version, description: options.description })
  if (options.corsOrigins.length > 0) {
    await app.register(cors, { origin: options.corsOrigins.includes('*') ? true : options.corsOrigins, credentials: true })
  }
  return app as unknown as FastifyInstance
}
