import type { MetricsRegistry } from '../../core/metrics/registry.ts'

export type Movement = 'capture' | 'refund' | 'void'
type TdsOutcome = 'approved' | 'rejected' | 'failed' | 'wrong_code'

/** What payments records; its domain code calls these (nothing is collected when metrics are off). */
export interface PaymentsMetrics {
  /** An authorization the acquirer answered, stored approved or declined. */
  authorization(kind: 'client' | 'recurring', outcome: 'approved' | 'declined'): void
  /** A capture, refund or void: `ok`, or the stable code of the error that refused it. */
  movement(kind: Movement, outcome: string): void
  /** An answer to a 3-D Secure challenge. */
  tdsChallenge(outcome: TdsOutcome): void
  /** A request answered from the idempotency store instead of running again. */
  idempotencyReplay(): void
}

export function createPaymentsMetrics(registry: MetricsRegistry): PaymentsMetrics {
  const authorizations = registry.counter({
    name: 'triad_payments_authorizations_total',
    help: 'Authorizations stored, by kind (client: the payment API and hosted page; recurring: merchant-initiated) and outcome (approved, declined)',
    labelNames: ['kind', 'outcome'],
  })
  const movements = registry.counter({
    name: 'triad_payments_movements_total',
    help: 'Captures, refunds and voids, by kind and outcome (ok, or the stable error code that refused it)',
    labelNames: ['kind', 'outcome'],
  })
  const challenges = registry.counter({
    name: 'triad_payments_tds_challenges_total',
    help: '3-D Secure challenge answers, by outcome (approved, rejected by the cardholder, failed after the last wrong code, wrong_code: asked again)',
    labelNames: ['outcome'],
  })
  const replays = registry.counter({ name: 'triad_payments_idempotency_replays_total', help: 'Requests answered from the idempotency store (Idempotent-Replayed: true)' })
  return {
    authorization: (kind, outcome) => authorizations.inc({ kind, outcome }),
    movement: (kind, outcome) => movements.inc({ kind, outcome }),
    tdsChallenge: (outcome) => challenges.inc({ outcome }),
    idempotencyReplay: () => replays.inc(),
  }
}
