import type { Kysely } from 'kysely'

// Frozen: the merchant dashboard's sign-in sessions. Only the SHA-256 of the session token is
// stored (the cookie holds the token); the app it signs in as; ISO 8601 times that compare as text.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_dashboard_sessions')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('app_id', 'text', (col) => col.notNull().references('payments_apps.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('expires', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('payments_dashboard_sessions_expires').on('payments_dashboard_sessions').columns(['expires']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('payments_dashboard_sessions').execute()
}
