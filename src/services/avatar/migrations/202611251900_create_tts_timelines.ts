import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.
// The viseme timelines of recent syntheses, kept for a while so a client that took the audio
// as binary can fetch its timeline by synthesis id from any instance.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('avatar_tts_timelines')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('duration_ms', 'integer')
    .addColumn('visemes', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('avatar_tts_timelines_expiry').on('avatar_tts_timelines').column('expires_at').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('avatar_tts_timelines').execute()
}
