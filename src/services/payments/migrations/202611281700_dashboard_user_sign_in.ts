import type { Kysely } from 'kysely'

// Frozen: merchant users sign in to the dashboard (issue 30). One-time sign-in links (only the
// SHA-256 of the link's token, the user, when it expires and when it was used), the sessions of
// signed-in users (apart from the app-key sessions, whose app_id is NOT NULL), users' passkeys
// and the challenges of their WebAuthn ceremonies (SHA-256, used once), and who did each trail
// entry and event: actor_type 'app' | 'user', its id, and a user's e-mail at the time.

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

  await db.schema
    .createTable('payments_dashboard_passkeys')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('payments_users.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('counter', 'bigint', (col) => col.notNull())
    .addColumn('transports', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('last_used', 'text')
    .execute()
  await db.schema.createIndex('payments_dashboard_passkeys_user').on('payments_dashboard_passkeys').columns(['user_id']).execute()

  await db.schema
    .createTable('payments_dashboard_challenges')
    .addColumn('challenge_hash', 'text', (col) => col.primaryKey())
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text')
    .addColumn('expires', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('payments_dashboard_challenges_expires').on('payments_dashboard_challenges').columns(['expires']).execute()

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
  await db.schema.dropTable('payments_dashboard_challenges').execute()
  await db.schema.dropTable('payments_dashboard_passkeys').execute()
  await db.schema.dropTable('payments_dashboard_user_sessions').execute()
  await db.schema.dropTable('payments_dashboard_links').execute()
}
