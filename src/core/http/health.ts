import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { Database } from '../db/create-db.ts'
import { coreError } from '../errors/codes.ts'
import { redisNotReady, redisReady } from '../redis.ts'
import { within } from '../timeout.ts'
import type { Lifecycle } from './lifecycle.ts'

/** A dependency that has not answered within this long counts as unreachable. */
const CHECK_TIMEOUT_MS = 2000
/**
 * A database that answers, but slower than this, is "slow": the instance stays ready. Every
 * instance shares the one database, so taking a slow one out would only move its load onto
 * the others (and, the database being the cause, take them all out in turn).
 */
const DATABASE_SLOW_MS = 500

const HealthSchema = Type.Object({ status: Type.String() })
const CheckState = Type.String({ description: 'ok, slow (the database answers, but slowly: still ready), or why the check failed (unreachable, running, draining)' })
const ReadySchema = Type.Object({
  status: Type.String({ description: 'ready' }),
  database: Type.String({ description: 'the dialect: sqlite or postgres' }),
  checks: Type.Record(Type.String(), CheckState, { description: 'each check and its state: database, redis (when configured; unreachable does not fail readiness), shutdown' }),
})

/** One failed readiness check, in the details of the 503. */
export interface FailedCheck {
  check: 'migrations' | 'database' | 'services' | 'shutdown'
  state: string
}

/** The 503 `/readyz` answers, in the error body of whoever owns the path. */
export function notReady(failed: FailedCheck[]) {
  return coreError('service_unavailable', `Not ready: ${failed.map((failure) => `${failure.check} ${failure.state}`).join(', ')}`, {
    details: failed,
    headers: { 'retry-after': '5' },
  })
}

/** How long `work` took to answer, in ms. */
async function timed(work: Promise<unknown>): Promise<number> {
  const started = performance.now()
  await work
  return performance.now() - started
}

export interface HealthOptions {
  database: Database
  lifecycle: Lifecycle
  redis?: Redis
}

/**
 * `/healthz`: the process answers (no I/O: a liveness probe must not fail because a dependency
 * did). `/readyz`: it should be sent traffic: not stopping, its database answers; Redis, when
 * configured, is reported in `checks` but does not fail it (see below); a 503 names each check
 * that failed. Migrations run before this app
 * exists; while they do, the port holder (core/http/port-holder.ts) fails readiness.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  const { database, lifecycle, redis } = options
  app.get('/healthz', { schema: { tags: ['health'], summary: 'The process is up (no dependency is checked)', response: { 200: HealthSchema } } }, (_request, reply) => {
    reply.send({ status: 'ok' })
  })

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The instance should receive traffic: not stopping, its database answers (Redis is reported, not required)',
        description:
          'A 503 names the checks that failed in its details: migrations running, database unreachable, services starting (e.g. speech engines warming), shutdown draining. ' +
          '`checks.redis` (when REDIS_URL is set) is `ok` or `unreachable`; an unreachable Redis leaves the answer 200, since rate limits then count in memory.',
        response: { 200: ReadySchema },
      },
    },
    async (request) => {
      if (lifecycle.draining) throw notReady([{ check: 'shutdown', state: 'draining' }])
      const failed: FailedCheck[] = []
      const checks: Record<string, string> = { shutdown: 'ok' }
      const [databaseResult, redisResult] = await Promise.allSettled([
        timed(within(database.ping(), CHECK_TIMEOUT_MS, 'the database')),
        // Not connected is unreachable at once (nothing waits for ioredis's reconnect cycle).
        redis ? (redisReady(redis) ? within(redis.ping(), CHECK_TIMEOUT_MS, 'Redis') : Promise.reject(redisNotReady(redis))) : Promise.resolve(),
      ])
      if (databaseResult.status === 'rejected') {
        request.log.warn({ err: databaseResult.reason }, 'readiness: database unreachable')
        failed.push({ check: 'database', state: 'unreachable' })
      } else if (databaseResult.value > DATABASE_SLOW_MS) {
        request.log.warn({ ms: Math.round(databaseResult.value) }, 'readiness: database slow')
        checks.database = 'slow'
      } else checks.database = 'ok'
      if (redis) {
        // Reported, never failed on: every use of Redis has a documented way to go on without it
        // (rate limits count in memory, the operator channel answers 503), and Redis is shared, so
        // failing here would take every instance out at once for a fault none of them can mend.
        if (redisResult.status === 'rejected') {
          request.log.warn({ err: redisResult.reason }, 'readiness: redis unreachable (reported, not failed on)')
          checks.redis = 'unreachable'
        } else checks.redis = 'ok'
      }
      if (failed.length > 0) throw notReady(failed)
      return { status: 'ready', database: database.dialect, checks }
    },
  )
}
