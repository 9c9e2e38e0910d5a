import type { Kysely } from 'kysely'

// Frozen: merchant users sign in to the dashboard (issue 30). One-time sign-in links (only the
// SHA-256 of the link's token, the user, when it expires and when it was used), the sessions of
// signed-in users (apart from the app-key sessions, whose app_id is NOT NULL), and who did
// each trail entry and event: actor_type 'app' | 'user', its id, and a user's e-mail at the time.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_dashboard_links')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('payments_users.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('expires', 'text', (col) => col.notNull())
    .addColumn('used', 'text')
    .execute()
  await db.schema.createIndex('payments_dashboard_links_user').on('payments_dashboard_links').columns(['user_id', 'expires']).execute()

  await db.schema
    .createTable('payments_dashboard_user_sessions')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('payments_users.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('expires', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('payments_dashboard_user_sessions_user').on('payments_dashboard_user_sessions').columns(['user_id', 'expires']).execute()

  for (const table of ['payments_trail', 'payments_events']) {
    await db.schema.alterTable(table).addColumn('actor_type', 'text').execute()
    await db.schema.alterTable(table).addColumn('actor_id', 'text').execute()
    await db.schema.alterTable(table).addColumn('actor_email', 'text').execute()
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above.
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['payments_trail', 'payments_events']) {
    for (const column of ['actor_email', 'actor_id', 'actor_type']) await db.schema.alterTable(table).dropColumn(column).execute()
  }
  await db.schema.dropTable('payments_dashboard_user_sessions').execute()
  await db.schema.dropTable('payments_dashboard_links').execute()
}
