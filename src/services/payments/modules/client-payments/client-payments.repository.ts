import type { Kysely } from 'kysely'
import type { PaymentsTables } from '../../tables.ts'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'

const findMerchantQuery = prepared((db: Kysely<PaymentsTables>, v: Record<'key', never>) =>
  db.selectFrom('payments_merchants').select(['id', 'name', 'test', 'descriptor', 'currency', 'tds_mode']).where('key', '=', v.key),
)

/** The merchant a public key names, with what a payment needs; undefined when unknown. */
export async function findMerchantByKey(db: Kysely<PaymentsTables>, dialect: DialectName, key: string) {
  return (await findMerchantQuery(db, dialect, { key })).rows[0]
}

export type ClientMerchant = NonNullable<Awaited<ReturnType<typeof findMerchantByKey>>>
