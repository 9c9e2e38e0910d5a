import type { Kysely } from 'kysely'
import type { PaymentsTables } from '../../tables.ts'
import { compiledOnce } from '../../../../core/db/compiled-query.ts'

const findMerchantQuery = compiledOnce((db: Kysely<PaymentsTables>, v: Record<'key', never>) =>
  db.selectFrom('payments_merchants').select(['id', 'name', 'test', 'descriptor', 'currency', 'tds_mode']).where('key', '=', v.key),
)

/** The merchant a public key names, with what a payment needs; undefined when unknown. */
export async function findMerchantByKey(db: Kysely<PaymentsTables>, key: string) {
  return (await findMerchantQuery(db, { key })).rows[0]
}

export type ClientMerchant = NonNullable<Awaited<ReturnType<typeof findMerchantByKey>>>
