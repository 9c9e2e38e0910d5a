import type { Kysely } from 'kysely'

// Frozen. A merchant's balance was one row that every capture updated: on PostgreSQL all of a
// merchant's captures then queued on that row's lock until commit. The balance now lives in up
// to 16 shard rows per merchant (a capture adds to the shard of its transaction, so captures of
// different transactions rarely wait on each other); the balance is their sum.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payments_balance_shards')
    .addColumn('merchant_id', 'text', (col) => col.notNull().references('payments_merchants.id'))
    .addColumn('shard', 'integer', (col) => col.notNull())
    .addColumn('balance', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('payments_balance_shards_pk', ['merchant_id', 'shard'])
    .execute()
  await db
    .insertInto('payments_balance_shards')
    .columns(['merchant_id', 'shard', 'balance'])
    .expression((eb) =>
      eb
        .selectFrom('payments_merchants')
        .select(['id', eb.lit(0).as('shard'), 'balance'])
        .where('balance', '!=', 0),
    )
    .execute()
  await db.schema.alterTable('payments_merchants').dropColumn('balance').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('payments_merchants')
    .addColumn('balance', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute()
  const totals = await db
    .selectFrom('payments_balance_shards')
    .select(['merchant_id', (eb) => eb.fn.sum('balance').as('total')])
    .groupBy('merchant_id')
    .execute()
  for (const total of totals) {
    await db
      .updateTable('payments_merchants')
      .set({ balance: Number(total.total) })
      .where('id', '=', total.merchant_id)
      .execute()
  }
  await db.schema.dropTable('payments_balance_shards').execute()
}
