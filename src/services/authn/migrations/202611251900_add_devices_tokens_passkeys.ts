import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.

/**
 * Issue 19: what each session knows of its device, personal access tokens for scripts, and
 * passkeys (WebAuthn credentials) with the challenges of their ceremonies.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('authn_sessions').addColumn('device', 'text').execute()
  await db.schema.alterTable('authn_sessions').addColumn('ip', 'text').execute()
  await db.schema.alterTable('authn_sessions').addColumn('last_seen_at', 'text').execute()

  await db.schema
    .createTable('authn_personal_tokens')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('token_hint', 'text', (col) => col.notNull())
    .addColumn('scope', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('authn_personal_tokens_eperson').on('authn_personal_tokens').columns(['eperson_uuid', 'created_at']).execute()

  await db.schema
    .createTable('authn_passkeys')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('counter', 'bigint', (col) => col.notNull())
    .addColumn('transports', 'text', (col) => col.notNull())
    .addColumn('device_type', 'text', (col) => col.notNull())
    .addColumn('backed_up', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('last_used_at', 'text')
    .execute()
  await db.schema.createIndex('authn_passkeys_eperson').on('authn_passkeys').columns(['eperson_uuid', 'created_at']).execute()

  await db.schema
    .createTable('authn_webauthn_challenges')
    .addColumn('challenge_hash', 'text', (col) => col.primaryKey())
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('eperson_uuid', 'text', (col) => col.references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('authn_webauthn_challenges_expiry').on('authn_webauthn_challenges').column('expires_at').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('authn_webauthn_challenges').execute()
  await db.schema.dropTable('authn_passkeys').execute()
  await db.schema.dropTable('authn_personal_tokens').execute()
  await db.schema.alterTable('authn_sessions').dropColumn('last_seen_at').execute()
  await db.schema.alterTable('authn_sessions').dropColumn('ip').execute()
  await db.schema.alterTable('authn_sessions').dropColumn('device').execute()
}
