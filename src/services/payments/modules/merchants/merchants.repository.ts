import type { ExpressionBuilder, Kysely } from 'kysely'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import { sql } from 'kysely'
import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import type { MerchantRow, MerchantsTable, PaymentsDb, PaymentsTables } from '../../tables.ts'

export async function insertMerchant(db: PaymentsDb, row: MerchantsTable): Promise<void> {
  await db.insertInto('payments_merchants').values(row).execute()
}

// The balance is the sum of the merchant's shards (cast: PostgreSQL sums bigint as numeric).
const balance = sql<number>`(select cast(coalesce(sum(s.balance), 0) as bigint) from payments_balance_shards s where s.merchant_id = payments_merchants.id)`

export async function findMerchant(db: PaymentsDb, id: string): Promise<MerchantRow | undefined> {
  const row = await db.selectFrom('payments_merchants').selectAll().select(balance.as('balance')).where('id', '=', id).executeTakeFirst()
  return row && { ...row, balance: Number(row.balance) }
}

export async function updateMerchant(db: PaymentsDb, id: string, changes: Partial<Pick<MerchantsTable, 'name' | 'email' | 'descriptor'>>): Promise<void> {
  if (Object.keys(changes).length === 0) return
  await db.updateTable('payments_merchants').set(changes).where('id', '=', id).execute()
}

/** The merchants `memberId` belongs to: an app's, or a merchant user's (signed in to the dashboard). */
export async function listMerchantsOfMember(db: PaymentsDb, memberId: string, page: PageRequest, filter: { test?: boolean } = {}): Promise<MerchantRow[]> {
  let query = db
    .selectFrom('payments_merchants')
    .selectAll('payments_merchants')
    .select(balance.as('balance'))
    .where((eb) => isMember(eb, memberId))
  if (filter.test !== undefined) query = query.where('payments_merchants.test', '=', filter.test ? 1 : 0)
  const rows = await applyPage(query, 'payments_merchants.id', page).execute()
  return rows.map((row) => ({ ...row, balance: Number(row.balance) }))
}

/**
 * Whether `memberId` belongs to the merchant as an app or as a merchant user: every member has
 * full access (the spec), and the ids of apps and users come from one generator, so an id
 * names one of them.
 */
function isMember(eb: ExpressionBuilder<PaymentsTables, 'payments_merchants'>, memberId: string) {
  return eb.or([
    eb.exists(
      eb.selectFrom('payments_merchant_apps').select('app_id').whereRef('payments_merchant_apps.merchant_id', '=', 'payments_merchants.id').where('app_id', '=', memberId),
    ),
    eb.exists(
      eb.selectFrom('payments_merchant_users').select('user_id').whereRef('payments_merchant_users.merchant_id', '=', 'payments_merchants.id').where('user_id', '=', memberId),
    ),
  ])
}

export async function isMemberOfMerchant(db: PaymentsDb, merchantId: string, memberId: string): Promise<boolean> {
  const row = await db.selectFrom('payments_merchants').select('id').where('id', '=', merchantId).where((eb) => isMember(eb, memberId)).executeTakeFirst()
  return row !== undefined
}

export async function isAppOfMerchant(db: PaymentsDb, merchantId: string, appId: string): Promise<boolean> {
  const row = await db
    .selectFrom('payments_merchant_apps')
    .select('app_id')
    .where('merchant_id', '=', merchantId)
    .where('app_id', '=', appId)
    .executeTakeFirst()
  return row !== undefined
}

/** Returns false when the app already belonged to the merchant. */
export async function addAppToMerchant(db: PaymentsDb, merchantId: string, appId: string, created: string): Promise<boolean> {
  const result = await db
    .insertInto('payments_merchant_apps')
    .values({ merchant_id: merchantId, app_id: appId, created })
    .onConflict((oc) => oc.columns(['merchant_id', 'app_id']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
}

export async function removeAppFromMerchant(db: PaymentsDb, merchantId: string, appId: string): Promise<boolean> {
  const result = await db.deleteFrom('payments_merchant_apps').where('merchant_id', '=', merchantId).where('app_id', '=', appId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function countAppsOfMerchant(db: PaymentsDb, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('payments_merchant_apps')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

export async function listAppsOfMerchant(db: PaymentsDb, merchantId: string, page: PageRequest) {
  const query = db
    .selectFrom('payments_apps')
    .innerJoin('payments_merchant_apps', 'payments_merchant_apps.app_id', 'payments_apps.id')
    .select(['payments_apps.id as id', 'payments_apps.name as name', 'payments_merchant_apps.created as created'])
    .where('payments_merchant_apps.merchant_id', '=', merchantId)
  return applyPage(query, 'payments_apps.id', page).execute()
}

export async function findUserByEmail(db: PaymentsDb, email: string) {
  return db.selectFrom('payments_users').select(['id', 'email', 'created']).where('email', '=', email).executeTakeFirst()
}

export async function insertUser(db: PaymentsDb, row: { id: string; email: string; created: string }): Promise<void> {
  await db
    .insertInto('payments_users')
    .values(row)
    .onConflict((oc) => oc.column('email').doNothing())
    .execute()
}

export async function addUserToMerchant(db: PaymentsDb, merchantId: string, userId: string, created: string): Promise<boolean> {
  const result = await db
    .insertInto('payments_merchant_users')
    .values({ merchant_id: merchantId, user_id: userId, created })
    .onConflict((oc) => oc.columns(['merchant_id', 'user_id']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
}

export async function removeUserFromMerchant(db: PaymentsDb, merchantId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('payments_merchant_users').where('merchant_id', '=', merchantId).where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function listUsersOfMerchant(db: PaymentsDb, merchantId: string, page: PageRequest) {
  const query = db
    .selectFrom('payments_users')
    .innerJoin('payments_merchant_users', 'payments_merchant_users.user_id', 'payments_users.id')
    .select(['payments_users.id as id', 'payments_users.email as email', 'payments_merchant_users.created as created'])
    .where('payments_merchant_users.merchant_id', '=', merchantId)
  return applyPage(query, 'payments_users.id', page).execute()
}

const findMerchantQuery = prepared((db: Kysely<PaymentsTables>, v: Record<'key', never>) =>
  db.selectFrom('payments_merchants').select(['id', 'name', 'test', 'descriptor', 'currency', 'tds_mode']).where('key', '=', v.key),
)

/** The merchant a public key names, with what a payment needs; undefined when unknown. */
export async function findMerchantByKey(db: Kysely<PaymentsTables>, dialect: DialectName, key: string) {
  return (await findMerchantQuery(db, dialect, { key })).rows[0]
}

export type ClientMerchant = NonNullable<Awaited<ReturnType<typeof findMerchantByKey>>>
