import type { PaymentsDb } from '../../tables.ts'

/** The merchant a public key names, with what a payment needs; undefined when unknown. */
export async function findMerchantByKey(db: PaymentsDb, key: string) {
  return db
    .selectFrom('payments_merchants')
    .select(['id', 'name', 'test', 'descriptor', 'currency', 'tds_mode'])
    .where('key', '=', key)
    .executeTakeFirst()
}

export type ClientMerchant = NonNullable<Awaited<ReturnType<typeof findMerchantByKey>>>
