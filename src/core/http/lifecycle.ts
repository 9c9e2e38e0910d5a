import type { FastifyInstance } from 'fastify'
import { coreError } from '../errors/codes.ts'

/**
 * Where the process is in its life, shared by the core and the services: serving, draining
 * after a stop signal (readiness fails, clients are asked to close their connections, running
 * work goes on), refusing new requests once a proxy has kept sending for a while (each answered
 * 503 unprocessed, for the proxy to send elsewhere), and past the grace period (long-running
 * work stops and tells the client to retry).
 */
export interface Lifecycle {
  /** True from the stop signal on. */
  readonly draining: boolean
  /** True once new requests are answered 503 without being processed. */
  readonly refusing: boolean
  /** Aborted when the grace period ends: what still runs (a streamed reply) stops then. */
  readonly deadline: AbortSignal
  startDraining(): void
  startRefusing(): void
  endGrace(): void
}

export function createLifecycle(): Lifecycle {
  const deadline = new AbortController()
  const lifecycle = {
    draining: false,
    refusing: false,
    deadline: deadline.signal,
    startDraining() {
      lifecycle.draining = true
    },
    startRefusing() {
      lifecycle.draining = true
      lifecycle.refusing = true
    },
    endGrace() {
      lifecycle.draining = true
      if (!deadline.signal.aborted) deadline.abort(new Error('the server is shutting down'))
    },
  }
  return lifecycle
}

/** Probes keep their own answers while refusing: liveness stays up, readiness says "draining". */
const PROBES = new Set(['/healthz', '/readyz'])

/**
 * The two hooks a stop needs on every route, installed on the root before any service so that
 * every route runs them first: while draining each response asks its client to close the
 * connection; while refusing, a new request is answered 503 before anything reads its body,
 * authenticates it or touches the database: nothing of it was processed, so a proxy may send it,
 * POST or not, to another instance (deploy/nginx.conf does).
 */
export function installLifecycleHooks(app: FastifyInstance, lifecycle: Lifecycle): void {
  app.addHook('onRequest', function refuseWhileShuttingDown(request, _reply, done) {
    if (!lifecycle.refusing || PROBES.has(request.url.split('?')[0] ?? '')) return done()
    done(coreError('service_unavailable', 'This instance is shutting down and did not process the request; send it again', { headers: { 'retry-after': '1' } }))
  })
  app.addHook('onSend', function closeConnectionWhileDraining(_request, reply, payload, done) {
    if (lifecycle.draining) reply.header('connection', 'close')
    done(null, payload)
  })
}
