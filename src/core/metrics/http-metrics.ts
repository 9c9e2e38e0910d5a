import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { coreError } from '../errors/codes.ts'
import { boundCounter, boundHistogram } from './bound-series.ts'
import { LATENCY_BUCKETS, type PrometheusMetrics } from './registry.ts'

export interface MetricsEndpointOptions {
  /** Serve the exposition on a listener of its own at this port (and METRICS_HOST). */
  port?: number
  host: string
  /** Required as `Authorization: Bearer …` wherever the exposition is served. */
  token?: string
}

/** What a route label says when no route matched: one value for every unknown path. */
const UNMATCHED_ROUTE = 'unmatched'

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

interface Recorders {
  count: { inc(): void }
  latency: { observe(value: number): void }
}

/**
 * Counts every response by route pattern, method and status, with its latency, and serves the
 * exposition at `GET /metrics`: on a port of its own when `port` is set, otherwise on the main
 * port, where the bearer token is then required (the caller guarantees one of the two).
 */
export function installMetrics(app: FastifyInstance, metrics: PrometheusMetrics, options: MetricsEndpointOptions): void {
  const requests = boundCounter(metrics.registry, {
    name: 'http_requests_total',
    help: 'HTTP responses sent, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
  })
  const durations = boundHistogram(metrics.registry, {
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of its response (a whole stream for SSE), by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: LATENCY_BUCKETS,
  })
  // The series of each (route, method, status) are looked up once; the keys are bounded:
  // route patterns × methods × statuses.
  const children = new Map<string, Recorders>()
  const recordersFor = (route: string, method: string, status: number): Recorders => {
    const key = `${status} ${method} ${route}`
    let recorders = children.get(key)
    if (!recorders) {
      const labels = { route, method, status: String(status) }
      recorders = { count: requests(labels), latency: durations(labels) }
      children.set(key, recorders)
    }
    return recorders
  }
  app.addHook('onResponse', function recordRequestMetrics(request, reply, done) {
    const recorders = recordersFor(request.routeOptions.url ?? UNMATCHED_ROUTE, KNOWN_METHODS.has(request.method) ? request.method : 'OTHER', reply.statusCode)
    recorders.count.inc()
    recorders.latency.observe(reply.elapsedTime / 1000)
    done()
  })

  const allowed = tokenCheck(options.token)
  if (options.port === undefined) {
    app.get('/metrics', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
      if (!allowed(request.headers.authorization)) {
        throw coreError('unauthorized', 'GET /metrics needs its bearer token', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } })
      }
      return reply.type(metrics.contentType).send(await metrics.render())
    })
    return
  }
  const port = options.port
  let server: Server | undefined
  app.addHook('onReady', async () => {
    server = createServer((request, response) => void answerScrape(request, response, metrics, allowed))
    server.listen(port, options.host)
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))])
    app.log.info(`metrics on http://${options.host}:${port}/metrics`)
  })
  app.addHook('onClose', async () => {
    if (!server?.listening) return
    server.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
  })
}

async function answerScrape(request: IncomingMessage, response: ServerResponse, metrics: PrometheusMetrics, allowed: (header: string | undefined) => boolean): Promise<void> {
  const path = (request.url ?? '/').split('?')[0]
  const error = (status: number, code: string, message: string, headers: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify({ error: { code, message } }))
  }
  if (path !== '/metrics') return error(404, 'not_found', `No route for ${request.method} ${path}`)
  if (request.method !== 'GET' && request.method !== 'HEAD') return error(405, 'method_not_allowed', 'GET /metrics only', { allow: 'GET, HEAD' })
  if (!allowed(request.headers.authorization)) return error(401, 'unauthorized', 'GET /metrics needs its bearer token', { 'www-authenticate': 'Bearer realm="metrics"' })
  try {
    const body = await metrics.render()
    response.writeHead(200, { 'content-type': metrics.contentType }).end(request.method === 'HEAD' ? undefined : body)
  } catch {
    error(500, 'internal_error', 'the metrics could not be collected')
  }
}

/** Without a token every scrape is allowed (the port's address is the protection); with one, only its bearer. */
function tokenCheck(token: string | undefined): (header: string | undefined) => boolean {
  if (token === undefined) return () => true
  const expected = createHash('sha256').update(token).digest()
  return (header) => {
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!match?.[1]) return false
    return timingSafeEqual(createHash('sha256').update(match[1]).digest(), expected)
  }
}
