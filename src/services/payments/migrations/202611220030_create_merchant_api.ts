import type { Kysely } from 'kysely'

// Frozen: the merchant API's tables. Money is bigint minor units, timestamps ISO 8601 text,
// booleans 0/1, JSON as text. Ids are 24-hex time-ordered strings, so ordering by id is
// ordering by creation time (the pagination cursor).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_apps')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('payments_merchants')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('key', 'text', (col) => col.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('currency', 'text', (col) => col.notNull())
    .addColumn('test', 'integer', (col) => col.notNull())
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('website', 'text', (col) => col.notNull())
    .addColumn('descriptor', 'text', (col) => col.notNull())
    .addColumn('company_country', 'text', (col) => col.notNull())
    .addColumn('company_number', 'text')
    .addColumn('bank_iban', 'text')
    .addColumn('fee_rate_ppm', 'integer', (col) => col.notNull())
    .addColumn('fee_flat', 'bigint', (col) => col.notNull())
    .addColumn('dispute_fee', 'bigint', (col) => col.notNull())
    .addColumn('tds_mode', 'text', (col) => col.notNull())
    .addColumn('balance', 'bigint', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('payments_merchant_apps')
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('app_id', 'text', (col) => col.notNull().references('payments_apps.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('payments_merchant_apps_pk', ['merchant_id', 'app_id'])
    .execute()
  await db.schema.createIndex('payments_merchant_apps_app').on('payments_merchant_apps').columns(['app_id', 'merchant_id']).execute()

  await db.schema
    .createTable('payments_users')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('email', 'text', (col) => col.notNull().unique())
    .addColumn('created', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('payments_merchant_users')
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('payments_users.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('payments_merchant_users_pk', ['merchant_id', 'user_id'])
    .execute()

  await db.schema
    .createTable('payments_outbox')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('recipient', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('payments_transactions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('test', 'integer', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('currency', 'text', (col) => col.notNull())
    .addColumn('amount', 'bigint', (col) => col.notNull())
    .addColumn('descriptor', 'text', (col) => col.notNull())
    .addColumn('captured_amount', 'bigint', (col) => col.notNull())
    .addColumn('refunded_amount', 'bigint', (col) => col.notNull())
    .addColumn('voided_amount', 'bigint', (col) => col.notNull())
    .addColumn('disputed_amount', 'bigint', (col) => col.notNull())
    .addColumn('lost_amount', 'bigint', (col) => col.notNull())
    .addColumn('card_bin', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('card_expiry', 'text')
    .addColumn('card_scheme', 'text')
    .addColumn('card_code_present', 'integer', (col) => col.notNull())
    // Opaque reference to the stored card credential (the vault's), resolved by the processor.
    .addColumn('card_ref', 'text')
    .addColumn('custom', 'text')
    .addColumn('text', 'text')
    .addColumn('tds', 'text')
    .addColumn('recurring', 'integer', (col) => col.notNull())
    .addColumn('successful', 'integer', (col) => col.notNull())
    .addColumn('error', 'text')
    .addColumn('source_transaction_id', 'text')
    .execute()
  await db.schema.createIndex('payments_transactions_merchant').on('payments_transactions').columns(['merchant_id', 'id']).execute()

  await db.schema
    .createTable('payments_lines')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('test', 'integer', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('balance', 'bigint', (col) => col.notNull())
    .addColumn('fee', 'bigint', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('transaction_id', 'text')
    .addColumn('amount_currency', 'text')
    .addColumn('amount', 'bigint')
    .execute()
  await db.schema.createIndex('payments_lines_merchant').on('payments_lines').columns(['merchant_id', 'id']).execute()

  await db.schema
    .createTable('payments_trail')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('transaction_id', 'text', (col) => col.notNull().references('payments_transactions.id'))
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('amount', 'bigint', (col) => col.notNull())
    .addColumn('balance', 'bigint', (col) => col.notNull())
    .addColumn('fee_flat', 'bigint', (col) => col.notNull())
    .addColumn('fee_rate', 'bigint', (col) => col.notNull())
    .addColumn('descriptor', 'text')
    .addColumn('line_id', 'text')
    .addColumn('dispute_id', 'text')
    .addColumn('dispute_outcome', 'text')
    .execute()
  await db.schema.createIndex('payments_trail_transaction').on('payments_trail').columns(['transaction_id', 'id']).execute()

  await db.schema
    .createTable('payments_cards')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('transaction_id', 'text', (col) => col.notNull())
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('bin', 'text')
    .addColumn('last4', 'text')
    .addColumn('expiry', 'text')
    .addColumn('scheme', 'text')
    .addColumn('card_ref', 'text')
    .addColumn('notes', 'text')
    .execute()

  await db.schema
    .createTable('payments_disputes')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('transaction_id', 'text', (col) => col.notNull().references('payments_transactions.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('amount', 'bigint', (col) => col.notNull())
    .addColumn('reason_code', 'integer', (col) => col.notNull())
    .addColumn('due', 'text', (col) => col.notNull())
    .addColumn('outcome', 'text')
    .addColumn('decided', 'text')
    .execute()
  await db.schema.createIndex('payments_disputes_merchant').on('payments_disputes').columns(['merchant_id', 'id']).execute()

  await db.schema
    .createTable('payments_frauds')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('transaction_id', 'text', (col) => col.notNull().references('payments_transactions.id'))
    .addColumn('created', 'text', (col) => col.notNull())
    .addColumn('reported', 'text')
    .addColumn('reason', 'integer')
    .execute()
  await db.schema.createIndex('payments_frauds_merchant').on('payments_frauds').columns(['merchant_id', 'id']).execute()

  // The sandbox acquirer's view of a test card: its state carries over to later charges.
  await db.schema
    .createTable('payments_sandbox_cards')
    .addColumn('card_ref', 'text', (col) => col.primaryKey())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('balance_currency', 'text')
    .addColumn('balance', 'bigint')
    .addColumn('limit_currency', 'text')
    .addColumn('limit_amount', 'bigint')
    .addColumn('updated', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('payments_idempotency')
    .addColumn('app_id', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('fingerprint', 'text', (col) => col.notNull())
    .addColumn('status', 'integer')
    .addColumn('content_type', 'text')
    .addColumn('body', 'text')
    .addColumn('created', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('payments_idempotency_pk', ['app_id', 'key'])
    .execute()
  await db.schema.createIndex('payments_idempotency_created').on('payments_idempotency').column('created').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'payments_idempotency',
    'payments_sandbox_cards',
    'payments_frauds',
    'payments_disputes',
    'payments_cards',
    'payments_trail',
    'payments_lines',
    'payments_transactions',
    'payments_outbox',
    'payments_merchant_users',
    'payments_users',
    'payments_merchant_apps',
    'payments_merchants',
    'payments_apps',
  ]) {
    await db.schema.dropTable(table).ifExists().execute()
  }
}
