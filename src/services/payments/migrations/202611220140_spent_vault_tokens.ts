import type { Kysely } from 'kysely'

// Frozen: vault tokens become self-contained (AES-256-GCM sealed, carrying their own expiry),
// so the vault writes nothing when it hands one out; the database only remembers which tokens
// were spent, until they expire, which keeps them single-use.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_vault_spent_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('expires', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('payments_vault_spent_tokens_expires').on('payments_vault_spent_tokens').column('expires').execute()
  await db.schema.dropTable('payments_vault_tokens').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_vault_tokens')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('sealed', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('expires', 'text', (col) => col.notNull())
    .addColumn('used', 'integer', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('payments_vault_tokens_expires').on('payments_vault_tokens').column('expires').execute()
  await db.schema.dropTable('payments_vault_spent_tokens').execute()
}
