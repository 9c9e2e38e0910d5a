import { createHash } from 'node:crypto'
import type { PaymentsMetrics } from '../metrics.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../../../core/clock.ts'
import { isUniqueViolation } from '../../../core/db/errors.ts'
import type { PaymentsDb } from '../tables.ts'
import { conflict, fieldError } from './errors.ts'
import { currentApp } from './auth.ts'

const PRUNE_EVERY_MS = 60_000
/**
 * A key still marked in progress after this long belongs to a request whose process died (the
 * response never came back to store it); it is taken over rather than refused for the whole TTL.
 */
const ABANDONED_AFTER_MS = 60_000

/**
 * `Idempotency-Key` on any authenticated POST (beyond Paylike, as Stripe and Adyen do): the
 * first response is stored and replayed for `ttlMs`; the same key with another method, path or
 * body is refused with 409, and so is a retry while the first request is still running. Keys
 * are per app, so one app can never see another's responses. A 5xx, 409 or 429 is not kept (the
 * client should retry those for real). `POST /apps` is public and ignores the header: a shared
 * key there could replay someone else's new API key.
 */
export function installIdempotency(app: FastifyInstance, deps: { db: PaymentsDb; clock: Clock; ttlMs: number; metrics: PaymentsMetrics }): void {
  const tracked = new WeakMap<FastifyRequest, { appId: string; key: string }>()
  let lastPrune = 0

  const replay = (reply: FastifyReply, row: { status: number | null; content_type: string | null; body: string | null }) => {
    reply.code(row.status ?? 200).header('idempotent-replayed', 'true')
    if (row.content_type) reply.header('content-type', row.content_type)
    return reply.send(row.body ?? undefined)
  }

  const replayIdempotentRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST') return
    if ((request.routeOptions.config as { public?: boolean } | undefined)?.public) return
    const header = request.headers['idempotency-key']
    if (header === undefined) return
    const key = Array.isArray(header) ? header[0] : header
    if (!key || key.length > 255) throw fieldError('Idempotency-Key', 'must be 1 to 255 characters')
    const appId = currentApp(request).id
    const now = deps.clock.now()
    const fingerprint = createHash('sha256')
      .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex')

    if (now.getTime() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = now.getTime()
      await deps.db
        .deleteFrom('payments_idempotency')
        .where('created', '<', new Date(now.getTime() - deps.ttlMs).toISOString())
        .execute()
    }

    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await deps.db
          .insertInto('payments_idempotency')
          .values({ app_id: appId, key, fingerprint, status: null, content_type: null, body: null, created: now.toISOString() })
          .execute()
        tracked.set(request, { appId, key })
        return
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
      }
      const existing = await deps.db.selectFrom('payments_idempotency').selectAll().where('app_id', '=', appId).where('key', '=', key).executeTakeFirst()
      if (!existing) continue
      const age = now.getTime() - new Date(existing.created).getTime()
      if (age >= deps.ttlMs || (existing.status === null && age >= ABANDONED_AFTER_MS)) {
        await deps.db.deleteFrom('payments_idempotency').where('app_id', '=', appId).where('key', '=', key).where('created', '=', existing.created).execute()
        continue
      }
      if (existing.fingerprint !== fingerprint) throw conflict('This Idempotency-Key was used with a different request')
      if (existing.status === null) throw conflict('A request with this Idempotency-Key is still being processed')
      deps.metrics.idempotencyReplay()
      return replay(reply, existing)
    }
    throw conflict('This Idempotency-Key is being reused concurrently')
  }

  const storeIdempotentAnswer = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const entry = tracked.get(request)
    if (!entry) return payload
    tracked.delete(request)
    const where = deps.db.updateTable('payments_idempotency').where('app_id', '=', entry.appId).where('key', '=', entry.key)
    const status = reply.statusCode
    // 504 outcome_unknown: the movement may have committed. The key stays "in progress" (a resend
    // is refused with 409) until it is taken over as abandoned, rather than freed for a resend
    // that could apply it twice.
    if (status === 504) return payload
    if (status >= 500 || status === 409 || status === 429) {
      await deps.db.deleteFrom('payments_idempotency').where('app_id', '=', entry.appId).where('key', '=', entry.key).execute()
      return payload
    }
    const contentType = reply.getHeader('content-type')
    await where
      .set({ status, content_type: typeof contentType === 'string' ? contentType : null, body: typeof payload === 'string' ? payload : null })
      .execute()
    return payload
  }

  // Only authenticated POST routes get the two hooks: on every other route (GET
  // /transactions/{id} above all) they would be two more asynchronous steps per request that
  // do nothing.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    // Public routes (the client API, the hosted page) take no key: no hooks there either.
    if (!methods.includes('POST') || (route.config as { public?: boolean } | undefined)?.public) return
    // First, as the scope-wide hooks they were: before any hook of the route itself.
    route.preHandler = [replayIdempotentRequest, ...asArray(route.preHandler)]
    route.onSend = [storeIdempotentAnswer, ...asArray(route.onSend)]
  })
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}
