import type { Kysely } from 'kysely'

// Frozen: an endpoint's previous signing secret while it is being rotated out (sealed like the
// current one, the endpoint id as additional data) and when deliveries stop signing with it.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('payments_webhook_endpoints').addColumn('previous_secret_sealed', 'text').execute()
  await db.schema.alterTable('payments_webhook_endpoints').addColumn('previous_secret_expires', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('payments_webhook_endpoints').dropColumn('previous_secret_expires').execute()
  await db.schema.alterTable('payments_webhook_endpoints').dropColumn('previous_secret_sealed').execute()
}
