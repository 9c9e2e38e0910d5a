import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('avatar_sessions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('last_active_at', 'text', (col) => col.notNull())
    .addColumn('message_count', 'integer', (col) => col.notNull())
    .execute()
  // Listing is newest first (with an id tie-break); expiry scans by last activity.
  await db.schema.createIndex('avatar_sessions_created').on('avatar_sessions').columns(['created_at', 'id']).execute()
  await db.schema.createIndex('avatar_sessions_last_active').on('avatar_sessions').column('last_active_at').execute()

  await db.schema
    .createTable('avatar_messages')
    .addColumn('session_id', 'text', (col) => col.notNull().references('avatar_sessions.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (col) => col.notNull())
    .addColumn('role', 'text', (col) => col.notNull())
    .addColumn('content', 'text', (col) => col.notNull())
    .addColumn('emotion', 'text')
    .addColumn('action', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('avatar_messages_pk', ['session_id', 'seq'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('avatar_messages').execute()
  await db.schema.dropTable('avatar_sessions').execute()
}
