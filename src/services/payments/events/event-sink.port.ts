import type { Transaction } from 'kysely'
import type { WriteBatch } from '../../../core/db/write-batch.ts'
import type { Actor } from '../actor.ts'
import type { PaymentsTables } from '../tables.ts'

/**
 * The events a merchant can receive by webhook, one per change the payments service commits.
 * `transaction.declined` and `recurring.charge_failed` both come from a recurring charge the
 * acquirer declined (the only declines that are stored: a declined customer payment leaves no
 * transaction behind); the second names the flow, so a server knows to ask the customer again.
 */
export const EVENT_TYPES = [
  'transaction.authorized',
  'transaction.declined',
  'transaction.captured',
  'transaction.refunded',
  'transaction.voided',
  'dispute.opened',
  'dispute.won',
  'dispute.lost',
  'fraud_alert.raised',
  'recurring.charge_failed',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

interface NewEvent {
  type: EventType
  merchantId: string
  /**
   * The transaction the event is about (a dispute's or fraud alert's too): events of one
   * subject are delivered to an endpoint in the order they were recorded.
   */
  subjectId: string
  /** The object as the merchant API returns it (a transaction, a dispute, a fraud alert). */
  data: unknown
  /** Who made the change (a capture, refund or void); none for a payment or the acquirer's dispute. */
  actor?: Actor
}

/**
 * The outbox port: whoever commits a change records its event in the same database transaction
 * (a `Transaction` or its `WriteBatch`, never the bare database), so an event exists if and only
 * if its change committed. The webhooks module implements it and delivers the events later.
 */
export interface EventSink {
  record(trx: Transaction<PaymentsTables> | WriteBatch<PaymentsTables>, event: NewEvent): Promise<void>
}
