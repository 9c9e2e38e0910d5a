import type { Kysely } from 'kysely'

// Frozen: webhook endpoints, the event outbox, deliveries (one per event and endpoint, with the
// lease a worker holds while sending) and every delivery attempt. Timestamps are ISO 8601 text
// (they compare as text), booleans 0/1, JSON as text.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_webhook_endpoints')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('secret_sealed', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('failing_since', 'text')
    .addColumn('deleted', 'text')
    .execute()
  await db.schema.createIndex('payments_webhook_endpoints_merchant').on('payments_webhook_endpoints').columns(['merchant_id', 'id']).execute()

  await db.schema
    .createTable('payments_events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('subject_id', 'text', (col) => col.notNull())
    .addColumn('subject_seq', 'integer', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('data', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('payments_events_merchant').on('payments_events').columns(['merchant_id', 'id']).execute()
  await db.schema.createIndex('payments_events_subject').on('payments_events').columns(['subject_id', 'subject_seq']).unique().execute()

  await db.schema
    .createTable('payments_event_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('event_id', 'text', (col) => col.notNull().references('payments_events.id'))
    .addColumn('endpoint_id', 'text', (col) => col.notNull().references('payments_webhook_endpoints.id'))
    .addColumn('subject_id', 'text', (col) => col.notNull())
    .addColumn('subject_seq', 'integer', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull())
    .addColumn('next_attempt', 'text', (col) => col.notNull())
    .addColumn('lease_until', 'text')
    .addColumn('lease_token', 'text')
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('completed', 'text')
    .addColumn('last_error', 'text')
    .execute()
  await db.schema.createIndex('payments_event_deliveries_due').on('payments_event_deliveries').columns(['status', 'next_attempt']).execute()
  await db.schema
    .createIndex('payments_event_deliveries_order')
    .on('payments_event_deliveries')
    .columns(['endpoint_id', 'subject_id', 'status', 'subject_seq'])
    .execute()
  await db.schema.createIndex('payments_event_deliveries_event').on('payments_event_deliveries').columns(['event_id', 'id']).execute()

  await db.schema
    .createTable('payments_delivery_attempts')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('delivery_id', 'text', (col) => col.notNull().references('payments_event_deliveries.id'))
    .addColumn('event_id', 'text', (col) => col.notNull())
    .addColumn('endpoint_id', 'text', (col) => col.notNull())
    .addColumn('started', 'text', (col) => col.notNull())
    .addColumn('latency_ms', 'integer', (col) => col.notNull())
    .addColumn('succeeded', 'integer', (col) => col.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .execute()
  await db.schema.createIndex('payments_delivery_attempts_event').on('payments_delivery_attempts').columns(['event_id', 'id']).execute()
  await db.schema.createIndex('payments_delivery_attempts_endpoint').on('payments_delivery_attempts').columns(['endpoint_id', 'succeeded', 'started']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('payments_delivery_attempts').execute()
  await db.schema.dropTable('payments_event_deliveries').execute()
  await db.schema.dropTable('payments_events').execute()
  await db.schema.dropTable('payments_webhook_endpoints').execute()
}
