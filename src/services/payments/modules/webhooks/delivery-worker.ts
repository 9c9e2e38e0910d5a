import type { FastifyBaseLogger } from 'fastify'
import { fetch } from 'undici'
import type { Kysely } from 'kysely'
import type { Clock } from '../../../../core/clock.ts'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { Scheduler, SchedulerHandle } from '../../../../core/scheduler.ts'
import { actorOf } from '../../actor.ts'
import type { PaymentsTables } from '../../tables.ts'
import type { SecretBox } from './webhooks.keys.ts'
import * as repo from './webhooks.repository.ts'
import { eventBody, signedHeaders } from './webhooks.signing.ts'
import { DestinationRefused, guardedDispatcher, literalAddressRefusal } from './webhook-destination.ts'

/** Deliveries claimed (and sent concurrently) per round. */
const BATCH = 10
/** Rounds one wake-up runs at most while deliveries keep coming due, before yielding to the poll. */
const MAX_ROUNDS = 20
/** The first retry comes after about a minute; each failure doubles it, up to six hours. */
const FIRST_RETRY_MS = 60_000
const MAX_RETRY_MS = 6 * 3_600_000
/** A wake-up after an event is recorded waits this long, so that the recording transaction has committed. */
const NUDGE_MS = 20
const USER_AGENT = 'Triad-Webhooks/1.0'

/**
 * The wait before the next attempt after `failures` failed ones: exponential (1 min, 2, 4, …,
 * capped at 6 h) with "equal jitter" (half fixed, half random), so endpoints that failed
 * together are not retried together.
 */
function retryDelayMs(failures: number, random: () => number): number {
  const base = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1))
  return Math.round(base / 2 + (random() * base) / 2)
}

export interface DeliveryWorkerDeps {
  database: { db: Kysely<PaymentsTables>; dialect: DialectName }
  clock: Clock
  ids: IdGenerator
  scheduler: Scheduler
  secrets: SecretBox
  config: { timeoutMs: number; retryWindowMs: number; pollMs: number; allowPrivate: boolean }
  log: FastifyBaseLogger
  /** For the jitter (tests pin it). */
  random?: () => number
}

interface Outcome {
  ok: boolean
  status: number | null
  error: string | null
  latencyMs: number
  /** The worker was stopped mid-request: nothing to record, the delivery is handed back. */
  interrupted?: boolean
}

/**
 * Sends the outbox. Each round claims due deliveries under a lease (webhooks.repository.ts
 * `claimDue`), sends them with a timeout, and records every attempt; the lease outlives the
 * timeout, so a delivery is sent by one instance at a time, and one whose instance died is
 * taken up again once its lease has passed (at-least-once). The worker wakes up every poll
 * interval, and soon after this instance records an event.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps) {
  const { database, clock, config, log } = deps
  const random = deps.random ?? Math.random
  // Long enough to send (bounded by the timeout) and record the outcome; short enough that a
  // delivery whose instance died is taken up again soon.
  const leaseMs = 2 * config.timeoutMs + 5_000
  let running = false
  let timer: SchedulerHandle | undefined
  let busy: Promise<void> | undefined
  let wanted = false
  const stopping = new AbortController()
  const destinationPolicy = { allowPrivate: config.allowPrivate }
  // Connections resolve names through the policy; closed on stop, so no socket outlives the worker.
  const dispatcher = guardedDispatcher(destinationPolicy)

  function schedule(ms: number): void {
    timer?.cancel()
    timer = deps.scheduler.schedule(wake, ms)
  }

  async function wake(): Promise<void> {
    timer = undefined
    if (!running) return
    if (busy) {
      wanted = true
      return busy
    }
    busy = (async () => {
      try {
        do {
          wanted = false
          for (let round = 0; round < MAX_ROUNDS && running; round++) {
            // Events of one subject go one per round (the next waits for the one before), so
            // rounds continue while any delivery was due.
            if ((await runRound()) === 0) break
          }
        } while (wanted && running)
      } catch (error) {
        log.error({ err: error }, 'webhook delivery round failed')
      } finally {
        busy = undefined
        if (running) schedule(config.pollMs)
      }
    })()
    return busy
  }

  /**
   * The secrets a delivery is signed with: the endpoint's, then the one a rotation replaced
   * while it is still valid. Undefined when the current one cannot be opened; a previous one
   * that cannot be opened is left out (the current signature is what receivers move to).
   */
  async function signingSecrets(delivery: repo.ClaimedDelivery): Promise<string[] | undefined> {
    const current = await deps.secrets.open(delivery.secret_sealed, delivery.endpoint_id)
    if (current === undefined) return undefined
    const stillValid = delivery.previous_secret_expires !== null && delivery.previous_secret_expires > clock.now().toISOString()
    const previous = stillValid && delivery.previous_secret_sealed !== null ? await deps.secrets.open(delivery.previous_secret_sealed, delivery.endpoint_id) : undefined
    return previous === undefined ? [current] : [current, previous]
  }

  async function send(delivery: repo.ClaimedDelivery): Promise<Outcome> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const secrets = await signingSecrets(delivery)
    if (secrets === undefined) return { ok: false, status: null, error: 'the signing secret cannot be opened (is PAYMENTS_WEBHOOK_KEY the key it was sealed with?)', latencyMs: 0 }
    const body = eventBody({ id: delivery.event_id, type: delivery.type, created: delivery.event_created, data: delivery.data, actor: actorOf(delivery) })
    const unixSeconds = Math.floor(clock.now().getTime() / 1000)
    const refused = literalAddressRefusal(new URL(delivery.url), destinationPolicy)
    if (refused) return { ok: false, status: null, error: `refused: ${refused}`, latencyMs: 0 }
    const timeout = AbortSignal.timeout(config.timeoutMs)
    try {
      const response = await fetch(delivery.url, {
        dispatcher,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          ...signedHeaders({ eventId: delivery.event_id, body, unixSeconds, secrets }),
        },
        body,
        // A redirect is an answer like any other non-2xx: following it could send the event elsewhere.
        redirect: 'manual',
        signal: AbortSignal.any([timeout, stopping.signal]),
      })
      // The body is not read: nothing in it is used, and a large one must not hold the worker.
      await response.body?.cancel().catch(() => {})
      const ok = response.status >= 200 && response.status < 300
      return { ok, status: response.status, error: ok ? null : `HTTP ${response.status}`, latencyMs: elapsed() }
    } catch (error) {
      if (stopping.signal.aborted) return { ok: false, status: null, error: null, latencyMs: elapsed(), interrupted: true }
      if (timeout.aborted) return { ok: false, status: null, error: `no answer within ${config.timeoutMs} ms`, latencyMs: elapsed() }
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      if (cause instanceof DestinationRefused) return { ok: false, status: null, error: `refused: ${cause.message}`, latencyMs: elapsed() }
      return { ok: false, status: null, error: `could not connect: ${cause?.code ?? cause?.message ?? (error as Error).message}`, latencyMs: elapsed() }
    }
  }

  async function settle(delivery: repo.ClaimedDelivery, outcome: Outcome, startedAt: string): Promise<void> {
    const fenced = { id: delivery.id, token: delivery.lease_token }
    if (outcome.interrupted) {
      await repo.releaseLease(database.db, fenced)
      return
    }
    const now = clock.now()
    const nowIso = now.toISOString()
    const attempts = delivery.attempts + 1
    await withTransaction(database, async (trx) => {
      await repo.insertAttempt(trx, {
        id: deps.ids.timeOrdered(),
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        endpoint_id: delivery.endpoint_id,
        started: startedAt,
        latency_ms: outcome.latencyMs,
        succeeded: outcome.ok ? 1 : 0,
        response_status: outcome.status,
        error: outcome.error,
      })
      if (outcome.ok) {
        await repo.markDelivered(trx, fenced, attempts, nowIso)
        await repo.markEndpointHealthy(trx, delivery.endpoint_id)
        return
      }
      const error = outcome.error ?? 'failed'
      const next = now.getTime() + retryDelayMs(attempts, random)
      const givenUp = next - new Date(delivery.created).getTime() > config.retryWindowMs
      const kept = givenUp
        ? await repo.markFailed(trx, fenced, attempts, nowIso, `gave up after ${attempts} attempts; last: ${error}`)
        : await repo.markRetry(trx, fenced, attempts, new Date(next).toISOString(), error)
      if (!kept) log.warn({ delivery: delivery.id }, 'webhook delivery was taken over by another worker while this one sent it')
      const failingSince = await repo.markEndpointFailing(trx, delivery.endpoint_id, nowIso)
      // Disabled once it has failed for the whole retry window: every attempt for that long
      // (a busy endpoint), or every attempt of a delivery that was just given up (a quiet one).
      const failingLong = now.getTime() - new Date(failingSince).getTime() >= config.retryWindowMs
      if (failingLong || (givenUp && kept && !(await repo.succeededSince(trx, delivery.endpoint_id, delivery.created)))) {
        const reason = `every delivery since ${failingSince} failed (last: ${error})`
        if (await repo.disableEndpoint(trx, delivery.endpoint_id, reason, nowIso)) log.warn({ endpoint: delivery.endpoint_id, reason }, 'webhook endpoint disabled')
      }
    })
  }

  /** One round: claim, send concurrently, record. Answers how many deliveries it took. */
  async function runRound(): Promise<number> {
    const now = clock.now()
    const claimed = await repo.claimDue(database, {
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
      token: deps.ids.uuid(),
      limit: BATCH,
    })
    await Promise.all(
      claimed.map(async (delivery) => {
        const startedAt = clock.now().toISOString()
        const outcome = await send(delivery)
        try {
          await settle(delivery, outcome, startedAt)
        } catch (error) {
          // The lease runs out and another round tries again: at-least-once.
          log.error({ err: error, delivery: delivery.id }, 'could not record a webhook delivery attempt')
        }
      }),
    )
    return claimed.length
  }

  return {
    start(): void {
      if (running) return
      running = true
      schedule(0)
    },
    /** An event was recorded here: look soon rather than at the next poll. */
    nudge(): void {
      if (!running) return
      if (busy) wanted = true
      else schedule(NUDGE_MS)
    },
    /** Stops polling; requests in flight are abandoned and their deliveries handed back untried. */
    async stop(): Promise<void> {
      running = false
      timer?.cancel()
      timer = undefined
      stopping.abort()
      await busy
      await dispatcher.close()
    },
  }
}
