import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../../core/clock.ts'
import type { DialectName } from '../../../core/db/create-db.ts'
import { CommitHold, holdCommits } from '../../../core/db/held-commit.ts'
import type { PaymentsMetrics } from '../metrics.ts'
import type { PaymentsTables } from '../tables.ts'
import { currentApp } from './auth.ts'
import { conflict, fieldError } from './errors.ts'
import { findAnswer, pruneAnswers, type StoredAnswer, storeAnswer } from './idempotency.repository.ts'

const PRUNE_EVERY_MS = 60_000

interface KeyedRequest {
  appId: string
  key: string
  fingerprint: string
  hold: CommitHold
}

/**
 * `Idempotency-Key` on any authenticated POST (beyond Paylike, as Stripe and Adyen do): the
 * answer is stored and replayed for `ttlMs`, byte for byte; the same key with another method,
 * path or body is refused with 409. Keys are per app, so one app can never see another's
 * answers. `POST /apps` is public and ignores the header: a shared key there could replay
 * someone else's new API key.
 *
 * Exactly once by construction: a keyed request runs under a commit hold (core/db/held-commit.ts),
 * so its writes and its stored answer commit in one database transaction, once the answer is
 * known. Whatever happens to a connection, a request either committed with its key — every
 * resend gets the stored answer — or did not commit at all, and a resend runs it as new. Two
 * requests with one key at once: the second's answer cannot be stored while the first holds
 * the key (PostgreSQL makes it wait for the first's commit), so it is rolled back and answers
 * what the first stored. A 5xx, 409 or 429 stores nothing (the client should send it again).
 */
export function installIdempotency(
  app: FastifyInstance,
  deps: { database: { db: Kysely<PaymentsTables>; dialect: DialectName }; clock: Clock; ttlMs: number; metrics: PaymentsMetrics },
): void {
  const { db, dialect } = deps.database
  const keyed = new WeakMap<FastifyRequest, KeyedRequest>()
  let lastPrune = 0

  const expiredBefore = () => new Date(deps.clock.now().getTime() - deps.ttlMs).toISOString()

  const replay = (reply: FastifyReply, answer: StoredAnswer) => {
    deps.metrics.idempotencyReplay()
    reply.code(answer.status).header('idempotent-replayed', 'true')
    if (answer.contentType) reply.header('content-type', answer.contentType)
    return answer.body ?? ''
  }

  /** The key of a keyed request, checked; undefined for a request without one. */
  const keyOf = (request: FastifyRequest): string | undefined => {
    const header = request.headers['idempotency-key']
    if (header === undefined) return undefined
    const key = Array.isArray(header) ? header[0] : header
    if (!key || key.length > 255) throw fieldError('Idempotency-Key', 'must be 1 to 255 characters')
    return key
  }

  async function answerStored(appId: string, key: string, fingerprint: string): Promise<StoredAnswer | undefined> {
    const now = deps.clock.now().getTime()
    if (now - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = now
      await pruneAnswers(db, expiredBefore())
    }
    const answer = await findAnswer(db, dialect, appId, key, expiredBefore())
    if (answer && answer.fingerprint !== fingerprint) throw conflict('This Idempotency-Key was used with a different request')
    return answer
  }

  // Callback style: the rest of the request (its handler above all) runs inside `done`, so
  // under the hold.
  function holdKeyedRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    let key: string | undefined
    try {
      key = keyOf(request)
    } catch (error) {
      done(error as Error)
      return
    }
    if (key === undefined) {
      done()
      return
    }
    const appId = currentApp(request).id
    const fingerprint = createHash('sha256')
      .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex')
    answerStored(appId, key, fingerprint).then((answer) => {
      if (answer) {
        reply.send(replay(reply, answer))
        return
      }
      const hold = new CommitHold(db as Kysely<unknown>, dialect)
      keyed.set(request, { appId, key, fingerprint, hold })
      holdCommits(hold, () => done())
    }, done)
  }

  async function commitWithAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const entry = keyed.get(request)
    if (!entry) return payload
    keyed.delete(request)
    const { hold } = entry
    const status = reply.statusCode
    if (status >= 500 || status === 409 || status === 429) {
      await hold.rollback()
      return payload
    }
    // A failed request (4xx) changed nothing: its answer is stored on its own.
    if (status >= 400) await hold.rollback()
    const contentType = reply.getHeader('content-type')
    const answer = {
      appId: entry.appId,
      key: entry.key,
      fingerprint: entry.fingerprint,
      status,
      contentType: typeof contentType === 'string' ? contentType : null,
      body: typeof payload === 'string' ? payload : null,
      created: deps.clock.now().toISOString(),
      expiredBefore: expiredBefore(),
    }
    let stored: boolean
    try {
      stored = await storeAnswer((hold.transaction as typeof db | undefined) ?? db, dialect, answer)
    } catch (error) {
      await hold.rollback()
      throw error
    }
    if (!stored) {
      // Another request with this key committed first: this one's writes go, its answer is the other's.
      await hold.rollback()
      const first = await findAnswer(db, dialect, entry.appId, entry.key, answer.expiredBefore)
      if (!first) throw conflict('This Idempotency-Key is being reused concurrently; send the request again')
      if (first.fingerprint !== entry.fingerprint) throw conflict('This Idempotency-Key was used with a different request')
      return replay(reply, first)
    }
    // A COMMIT that fails is the request's error (503, or 504 when its outcome is unknown).
    await hold.commit()
    return payload
  }

  // Safety net: a hold still open when the answer has gone (an answer sent past onSend) is rolled back.
  async function releaseForgottenHold(request: FastifyRequest) {
    const entry = keyed.get(request)
    if (!entry) return
    keyed.delete(request)
    if (!entry.hold.ended) {
      request.log.error({ key: entry.key }, 'a keyed request ended without storing its answer; its writes were rolled back')
      await entry.hold.rollback()
    }
  }

  // Only authenticated POST routes get the hooks: on every other route (GET /transactions/{id}
  // above all) they would be asynchronous steps per request that do nothing.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    // Public routes (the client API, the hosted page) take no key: no hooks there either.
    if (!methods.includes('POST') || (route.config as { public?: boolean } | undefined)?.public) return
    // First, as the scope-wide hooks they were: before any hook of the route itself.
    route.preHandler = [holdKeyedRequest, ...asArray(route.preHandler)]
    route.onSend = [commitWithAnswer, ...asArray(route.onSend)]
    route.onResponse = [releaseForgottenHold, ...asArray(route.onResponse)]
  })
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}
