import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.
// The session list pages by the row value (created_at, id) and filters on last_active_at: an
// index holding all four listed columns answers a page from the index alone, at any depth,
// without visiting the table. It replaces the (created_at, id) index, its prefix.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('avatar_sessions_listing')
    .on('avatar_sessions')
    .columns(['created_at', 'id', 'last_active_at', 'message_count'])
    .execute()
  await db.schema.dropIndex('avatar_sessions_created').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('avatar_sessions_created').on('avatar_sessions').columns(['created_at', 'id']).execute()
  await db.schema.dropIndex('avatar_sessions_listing').execute()
}
