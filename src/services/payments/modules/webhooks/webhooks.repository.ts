import type { Kysely } from 'kysely'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import type {
  ActorColumns,
  DeliveryAttemptsTable,
  EventDeliveriesTable,
  EventsTable,
  PaymentsDb,
  PaymentsTables,
  PaymentsWrites,
  WebhookEndpointsTable,
} from '../../tables.ts'

// All SQL of the webhooks module: endpoints, the event outbox, deliveries and attempts.

/** An endpoint without its sealed secrets: what lists and checks read. */
export type EndpointRow = Omit<WebhookEndpointsTable, 'secret_sealed' | 'previous_secret_sealed'>

const ENDPOINT_COLUMNS = [
  'id',
  'merchant_id',
  'url',
  'events',
  'description',
  'created',
  'status',
  'disabled_reason',
  'disabled_at',
  'failing_since',
  'deleted',
  'previous_secret_expires',
] as const

export async function insertEndpoint(db: PaymentsDb, row: WebhookEndpointsTable): Promise<void> {
  await db.insertInto('payments_webhook_endpoints').values(row).execute()
}

/** The endpoint's current sealed secret (removed endpoints have none to give). By merchant too: one distribution key (docs/scaling.md). */
export async function sealedSecretOf(db: PaymentsDb, endpoint: { id: string; merchantId: string }): Promise<string | undefined> {
  const row = await db
    .selectFrom('payments_webhook_endpoints')
    .select('secret_sealed')
    .where('merchant_id', '=', endpoint.merchantId)
    .where('id', '=', endpoint.id)
    .where('deleted', 'is', null)
    .executeTakeFirst()
  return row?.secret_sealed
}

/**
 * Replaces the endpoint's secret, keeping the one replaced as the previous secret until
 * `previousExpires`. Only while the current secret is still `replaced`: of two rotations at
 * once, one wins and the other is told (false), so no secret is lost unseen.
 */
export async function replaceSecret(
  db: PaymentsDb,
  endpoint: { id: string; merchantId: string },
  change: { replaced: string; sealed: string; previousExpires: string },
): Promise<boolean> {
  const result = await db
    .updateTable('payments_webhook_endpoints')
    .set({ secret_sealed: change.sealed, previous_secret_sealed: change.replaced, previous_secret_expires: change.previousExpires })
    .where('merchant_id', '=', endpoint.merchantId)
    .where('id', '=', endpoint.id)
    .where('secret_sealed', '=', change.replaced)
    .where('deleted', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** The endpoint (removed ones included), never its secret. */
export async function findEndpoint(db: PaymentsDb, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('payments_webhook_endpoints').select(ENDPOINT_COLUMNS).where('id', '=', id).executeTakeFirst()
}

export async function listEndpoints(db: PaymentsDb, merchantId: string, page: PageRequest): Promise<EndpointRow[]> {
  const query = db.selectFrom('payments_webhook_endpoints').select(ENDPOINT_COLUMNS).where('merchant_id', '=', merchantId).where('deleted', 'is', null)
  return applyPage(query, 'id', page).execute()
}

/** Marks the endpoint removed; its pending deliveries are cancelled. False when it was removed already. */
export async function removeEndpoint(db: PaymentsDb, id: string, now: string): Promise<boolean> {
  const result = await db.updateTable('payments_webhook_endpoints').set({ deleted: now }).where('id', '=', id).where('deleted', 'is', null).executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) return false
  await endPendingDeliveriesOf(db, id, 'cancelled', 'the endpoint was removed', now)
  return true
}

async function endPendingDeliveriesOf(db: PaymentsDb, endpointId: string, status: 'cancelled' | 'failed', reason: string, now: string): Promise<void> {
  await db
    .updateTable('payments_event_deliveries')
    .set({ status, completed: now, last_error: reason, lease_until: null, lease_token: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute()
}

/** The enabled endpoints of a merchant and what they subscribe to. */
export async function subscribedEndpoints(db: PaymentsDb, merchantId: string): Promise<Array<{ id: string; events: string }>> {
  return db
    .selectFrom('payments_webhook_endpoints')
    .select(['id', 'events'])
    .where('merchant_id', '=', merchantId)
    .where('status', '=', 'enabled')
    .where('deleted', 'is', null)
    .execute()
}

const outboxPlace = prepared<PaymentsTables, 'subjectId' | 'merchantId' | 'enabled', { next_seq: number | string; endpoint_id: string | null; events: string | null }>((db, p) =>
  db
    .selectFrom((eb) =>
      eb
        .selectFrom('payments_events')
        .select((inner) => inner(inner.fn.coalesce(inner.fn.max('subject_seq'), inner.lit(0)), '+', inner.lit(1)).as('next_seq'))
        .where('subject_id', '=', p.subjectId)
        .as('s'),
    )
    .leftJoin('payments_webhook_endpoints as e', (join) =>
      join.on('e.merchant_id', '=', p.merchantId).on('e.status', '=', p.enabled).on('e.deleted', 'is', null),
    )
    .select(['s.next_seq', 'e.id as endpoint_id', 'e.events']),
)

/**
 * Where a new event of `subjectId` goes, one statement: its position in the subject's sequence
 * (1, 2, …) and the merchant's enabled endpoints with what they subscribe to. Read inside the
 * transaction that changes the subject, which holds its row lock (PostgreSQL) or the write lock
 * (SQLite), so two changes of one subject never take the same position; the unique index would
 * refuse it anyway.
 */
export async function outboxPlaceOf(db: PaymentsDb, dialect: DialectName, subjectId: string, merchantId: string): Promise<{ seq: number; endpoints: Array<{ id: string; events: string }> }> {
  const { rows } = await outboxPlace(db, dialect, { subjectId, merchantId, enabled: 'enabled' })
  const endpoints: Array<{ id: string; events: string }> = []
  for (const row of rows) if (row.endpoint_id !== null && row.events !== null) endpoints.push({ id: row.endpoint_id, events: row.events })
  return { seq: Number(rows[0]?.next_seq ?? 1), endpoints }
}

const eventInsert = prepared<PaymentsTables, keyof EventsTable, never>((db, p) =>
  db.insertInto('payments_events').values({ id: p.id, merchant_id: p.merchant_id, type: p.type, subject_id: p.subject_id, subject_seq: p.subject_seq, created: p.created, data: p.data, actor_type: p.actor_type, actor_id: p.actor_id, actor_email: p.actor_email }),
)

export async function insertEvent(db: PaymentsWrites, dialect: DialectName, row: EventsTable): Promise<void> {
  await eventInsert(db, dialect, row)
}

const deliveryInsert = prepared<PaymentsTables, keyof EventDeliveriesTable, never>((db, p) =>
  db.insertInto('payments_event_deliveries').values({
    id: p.id,
    event_id: p.event_id,
    endpoint_id: p.endpoint_id,
    subject_id: p.subject_id,
    subject_seq: p.subject_seq,
    status: p.status,
    attempts: p.attempts,
    next_attempt: p.next_attempt,
    lease_until: p.lease_until,
    lease_token: p.lease_token,
    created: p.created,
    completed: p.completed,
    last_error: p.last_error,
  }),
)

/** One statement a delivery (a merchant has few endpoints; the statement is prepared once). */
export async function insertDeliveries(db: PaymentsWrites, dialect: DialectName, rows: EventDeliveriesTable[]): Promise<void> {
  for (const row of rows) await deliveryInsert(db, dialect, row)
}

export async function findEvent(db: PaymentsDb, id: string): Promise<EventsTable | undefined> {
  return db.selectFrom('payments_events').selectAll().where('id', '=', id).executeTakeFirst()
}

export interface EventFilter {
  type?: string
  subjectId?: string
  /** Only events with at least one delivery in this status. */
  deliveryStatus?: EventDeliveriesTable['status']
}

export async function listEvents(db: PaymentsDb, merchantId: string, page: PageRequest, filter: EventFilter): Promise<EventsTable[]> {
  let query = db.selectFrom('payments_events').selectAll().where('merchant_id', '=', merchantId)
  if (filter.type !== undefined) query = query.where('type', '=', filter.type)
  if (filter.subjectId !== undefined) query = query.where('subject_id', '=', filter.subjectId)
  const deliveryStatus = filter.deliveryStatus
  if (deliveryStatus !== undefined)
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('payments_event_deliveries')
          .select('payments_event_deliveries.id')
          .whereRef('payments_event_deliveries.event_id', '=', 'payments_events.id')
          .where('payments_event_deliveries.status', '=', deliveryStatus),
      ),
    )
  return applyPage(query, 'id', page).execute()
}

export async function deliveriesOf(db: PaymentsDb, eventIds: string[]): Promise<EventDeliveriesTable[]> {
  if (eventIds.length === 0) return []
  return db.selectFrom('payments_event_deliveries').selectAll().where('event_id', 'in', eventIds).orderBy('id').execute()
}

export async function attemptsOf(db: PaymentsDb, eventIds: string[]): Promise<DeliveryAttemptsTable[]> {
  if (eventIds.length === 0) return []
  return db.selectFrom('payments_delivery_attempts').selectAll().where('event_id', 'in', eventIds).orderBy('id').execute()
}

/** A delivery as the worker sends it: the event and the endpoint's address and sealed secret. */
export interface ClaimedDelivery {
  id: string
  event_id: string
  endpoint_id: string
  attempts: number
  created: string
  lease_token: string
  url: string
  secret_sealed: string
  previous_secret_sealed: string | null
  previous_secret_expires: string | null
  type: string
  event_created: string
  data: string
  actor_type: ActorColumns['actor_type']
  actor_id: string | null
  actor_email: string | null
}

/**
 * Claims up to `limit` due deliveries for this worker by writing a lease on them, in one
 * database transaction. A delivery is due when it is pending, its next attempt has come, no
 * live lease is on it, its endpoint is enabled, and no earlier event of the same subject waits
 * for the same endpoint (so events of one transaction reach an endpoint in order). On
 * PostgreSQL the rows are locked with SKIP LOCKED, so instances claiming at once take disjoint
 * sets without waiting; SQLite has one writer at a time.
 */
export async function claimDue(
  database: { db: Kysely<PaymentsTables>; dialect: DialectName },
  claim: { now: string; leaseUntil: string; token: string; limit: number },
): Promise<ClaimedDelivery[]> {
  return withTransaction(database, async (trx) => {
    let query = trx
      .selectFrom('payments_event_deliveries as d')
      .select('d.id')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt', '<=', claim.now)
      .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', claim.now)]))
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('payments_webhook_endpoints as e')
            .select('e.id')
            .whereRef('e.id', '=', 'd.endpoint_id')
            .where('e.status', '=', 'enabled')
            .where('e.deleted', 'is', null),
        ),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('payments_event_deliveries as p')
              .select('p.id')
              .whereRef('p.endpoint_id', '=', 'd.endpoint_id')
              .whereRef('p.subject_id', '=', 'd.subject_id')
              .where('p.status', '=', 'pending')
              .whereRef('p.subject_seq', '<', 'd.subject_seq'),
          ),
        ),
      )
      .orderBy('d.next_attempt')
      .orderBy('d.subject_seq')
      .limit(claim.limit)
    if (database.dialect === 'postgres') query = query.forUpdate().skipLocked()
    const ids = (await query.execute()).map((row) => row.id)
    if (ids.length === 0) return []
    await trx.updateTable('payments_event_deliveries').set({ lease_until: claim.leaseUntil, lease_token: claim.token }).where('id', 'in', ids).execute()
    const rows = await trx
      .selectFrom('payments_event_deliveries as d')
      .innerJoin('payments_events as ev', 'ev.id', 'd.event_id')
      .innerJoin('payments_webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(['d.id', 'd.event_id', 'd.endpoint_id', 'd.attempts', 'd.created', 'e.url', 'e.secret_sealed', 'e.previous_secret_sealed', 'e.previous_secret_expires', 'ev.type', 'ev.created as event_created', 'ev.data', 'ev.actor_type', 'ev.actor_id', 'ev.actor_email'])
      .where('d.id', 'in', ids)
      .orderBy('d.subject_seq')
      .execute()
    return rows.map((row) => ({ ...row, lease_token: claim.token }))
  })
}

export async function insertAttempt(db: PaymentsDb, row: DeliveryAttemptsTable): Promise<void> {
  await db.insertInto('payments_delivery_attempts').values(row).execute()
}

type Fenced = { id: string; token: string }

/** Changes a delivery only while this worker's lease is on it; false when another worker has taken it since. */
async function updateLeased(db: PaymentsDb, fenced: Fenced, changes: Partial<EventDeliveriesTable>): Promise<boolean> {
  const result = await db
    .updateTable('payments_event_deliveries')
    .set({ ...changes, lease_until: null, lease_token: null })
    .where('id', '=', fenced.id)
    .where('lease_token', '=', fenced.token)
    .where('status', '=', 'pending')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export const markDelivered = (db: PaymentsDb, fenced: Fenced, attempts: number, now: string) =>
  updateLeased(db, fenced, { status: 'delivered', attempts, completed: now, last_error: null })

export const markRetry = (db: PaymentsDb, fenced: Fenced, attempts: number, nextAttempt: string, error: string) =>
  updateLeased(db, fenced, { attempts, next_attempt: nextAttempt, last_error: error })

export const markFailed = (db: PaymentsDb, fenced: Fenced, attempts: number, now: string, error: string) =>
  updateLeased(db, fenced, { status: 'failed', attempts, completed: now, last_error: error })

/** Gives a claimed delivery back untried (the worker is stopping): due again at once. */
export const releaseLease = (db: PaymentsDb, fenced: Fenced) => updateLeased(db, fenced, {})

export async function markEndpointHealthy(db: PaymentsDb, endpointId: string): Promise<void> {
  await db.updateTable('payments_webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).where('failing_since', 'is not', null).execute()
}

/** Notes a failure; answers since when the endpoint has been failing without a success. */
export async function markEndpointFailing(db: PaymentsDb, endpointId: string, now: string): Promise<string> {
  await db.updateTable('payments_webhook_endpoints').set({ failing_since: now }).where('id', '=', endpointId).where('failing_since', 'is', null).execute()
  const row = await db.selectFrom('payments_webhook_endpoints').select('failing_since').where('id', '=', endpointId).executeTakeFirst()
  return row?.failing_since ?? now
}

/** Whether any attempt to the endpoint succeeded since `since`. */
export async function succeededSince(db: PaymentsDb, endpointId: string, since: string): Promise<boolean> {
  const row = await db
    .selectFrom('payments_delivery_attempts')
    .select('id')
    .where('endpoint_id', '=', endpointId)
    .where('succeeded', '=', 1)
    .where('started', '>=', since)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/** Disables an enabled endpoint with its reason and ends its pending deliveries as failed. */
export async function disableEndpoint(db: PaymentsDb, endpointId: string, reason: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('payments_webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: now })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) return false
  await endPendingDeliveriesOf(db, endpointId, 'failed', `the endpoint was disabled: ${reason}`, now)
  return true
}

/** Re-enables a disabled endpoint (its failure streak forgotten). */
export async function enableEndpoint(db: PaymentsDb, endpointId: string): Promise<void> {
  await db
    .updateTable('payments_webhook_endpoints')
    .set({ status: 'enabled', disabled_reason: null, disabled_at: null, failing_since: null })
    .where('id', '=', endpointId)
    .execute()
}
