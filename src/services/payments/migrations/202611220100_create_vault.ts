import type { Kysely } from 'kysely'

// Frozen: the customer side's vault. Card numbers and security codes are only ever stored
// encrypted (AES-256-GCM, see modules/vault/vault.crypto.ts); tokens are stored as SHA-256
// hashes, so a copy of the database cannot be used to pay.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  // The vault key when PAYMENTS_VAULT_KEY is unset: generated once, shared by every instance.
  await db.schema
    .createTable('payments_vault_keys')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .execute()

  // Short-lived tokens handed out by POST /vault, spent by the payment that uses them.
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

  // Stored card numbers; `id` is the `card_ref` of transactions, saved cards and the sandbox.
  await db.schema
    .createTable('payments_vault_cards')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('sealed', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('payments_vault_cards').execute()
  await db.schema.dropTable('payments_vault_tokens').execute()
  await db.schema.dropTable('payments_vault_keys').execute()
}
