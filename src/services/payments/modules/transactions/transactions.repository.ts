import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import type { Database, DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import { createReadCache } from '../../../../core/db/read-cache.ts'
import type { Clock } from '../../../../core/clock.ts'
import { type ExpressionBuilder, sql } from 'kysely'
import type { CardsTable, PaymentsDb, PaymentsTables, PaymentsWrites, TrailRow, TransactionRow } from '../../tables.ts'
import type { MovementMerchant } from './money-rules.ts'

// Every column from the stand-ins: `transactionColumns` reads each one by name.
const insertTransactionQuery = prepared<PaymentsTables, keyof TransactionRow, never>((db, p) =>
  db.insertInto('payments_transactions').values(transactionColumns(p as unknown as TransactionRow)),
)

export async function insertTransaction(db: PaymentsDb, dialect: DialectName, row: TransactionRow): Promise<void> {
  await insertTransactionQuery(db, dialect, row)
}

export async function findTransaction(db: PaymentsDb, id: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('payments_transactions').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * `member`: whether the caller (an app, or a merchant user signed in to the dashboard: ids of
 * both come from one generator, so an id names one of them) belongs to the transaction's
 * merchant, the access check every read and money movement of a transaction makes in the
 * same statement.
 */
function appIsMember(eb: ExpressionBuilder<PaymentsTables, 'payments_transactions'>, appId: string) {
  return eb
    .or([
      eb.exists(
        eb
          .selectFrom('payments_merchant_apps')
          .select('payments_merchant_apps.app_id')
          .whereRef('payments_merchant_apps.merchant_id', '=', 'payments_transactions.merchant_id')
          .where('payments_merchant_apps.app_id', '=', appId),
      ),
      eb.exists(
        eb
          .selectFrom('payments_merchant_users')
          .select('payments_merchant_users.user_id')
          .whereRef('payments_merchant_users.merchant_id', '=', 'payments_transactions.merchant_id')
          .where('payments_merchant_users.user_id', '=', appId),
      ),
    ])
    .as('member')
}

const transactionForApp = prepared<PaymentsTables, 'id' | 'appId', TransactionRow & { member: unknown }>((db, p) =>
  db
    .selectFrom('payments_transactions')
    .selectAll('payments_transactions')
    .select((eb) => appIsMember(eb, p.appId))
    .where('payments_transactions.id', '=', p.id),
)

const isMember = (member: unknown) => member === true || member === 1 || member === 1n

/**
 * The transaction's own columns of a joined row. A literal, not a rest spread: copying a
 * 30-column row with `...rest` cost as much as SQLite's execution of the statement; the type
 * makes a new column a compile error here until it is added.
 */
function transactionColumns(row: TransactionRow): TransactionRow {
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    test: row.test,
    created: row.created,
    currency: row.currency,
    amount: row.amount,
    descriptor: row.descriptor,
    captured_amount: row.captured_amount,
    refunded_amount: row.refunded_amount,
    voided_amount: row.voided_amount,
    disputed_amount: row.disputed_amount,
    lost_amount: row.lost_amount,
    card_bin: row.card_bin,
    card_last4: row.card_last4,
    card_expiry: row.card_expiry,
    card_scheme: row.card_scheme,
    card_code_present: row.card_code_present,
    card_ref: row.card_ref,
    custom: row.custom,
    text: row.text,
    tds: row.tds,
    recurring: row.recurring,
    successful: row.successful,
    error: row.error,
    source_transaction_id: row.source_transaction_id,
  }
}

/**
 * The transaction and whether `appId` belongs to its merchant, in one statement: the hot read
 * path (GET /transactions/{id}) costs one round trip before the trail.
 */
export async function findTransactionForApp(
  db: PaymentsDb,
  dialect: DialectName,
  id: string,
  appId: string,
): Promise<{ row: TransactionRow; member: boolean } | undefined> {
  const [row] = (await transactionForApp(db, dialect, { id, appId })).rows
  return row ? { row: transactionColumns(row), member: isMember(row.member) } : undefined
}

interface TrailColumns {
  tr_id: string | null
  tr_kind: TrailRow['kind'] | null
  tr_created: string
  tr_amount: number
  tr_balance: number
  tr_fee_flat: number
  tr_fee_rate: number
  tr_descriptor: string | null
  tr_line_id: string | null
  tr_dispute_id: string | null
  tr_dispute_outcome: TrailRow['dispute_outcome']
  tr_actor_type: TrailRow['actor_type']
  tr_actor_id: string | null
  tr_actor_email: string | null
}

const transactionWithTrailForApp = prepared<PaymentsTables, 'id' | 'appId', TransactionRow & { member: unknown } & TrailColumns>((db, p) =>
  db
    .selectFrom('payments_transactions')
    .leftJoin('payments_trail', 'payments_trail.transaction_id', 'payments_transactions.id')
    .selectAll('payments_transactions')
    .select((eb) => [
      appIsMember(eb, p.appId),
      'payments_trail.id as tr_id',
      'payments_trail.kind as tr_kind',
      'payments_trail.created as tr_created',
      'payments_trail.amount as tr_amount',
      'payments_trail.balance as tr_balance',
      'payments_trail.fee_flat as tr_fee_flat',
      'payments_trail.fee_rate as tr_fee_rate',
      'payments_trail.descriptor as tr_descriptor',
      'payments_trail.line_id as tr_line_id',
      'payments_trail.dispute_id as tr_dispute_id',
      'payments_trail.dispute_outcome as tr_dispute_outcome',
      'payments_trail.actor_type as tr_actor_type',
      'payments_trail.actor_id as tr_actor_id',
      'payments_trail.actor_email as tr_actor_email',
    ])
    .where('payments_transactions.id', '=', p.id)
    .orderBy('payments_trail.created', 'asc')
    .orderBy('payments_trail.id', 'asc'),
)

/**
 * GET /transactions/{id} in one statement: the transaction, whether `appId` belongs to its
 * merchant, and its trail (oldest first) joined on. One statement is one read transaction on
 * SQLite (its lock calls cost as much as the reads) and one round trip on PostgreSQL.
 */
async function findTransactionWithTrailForApp(
  db: PaymentsDb,
  dialect: DialectName,
  id: string,
  appId: string,
): Promise<{ row: TransactionRow; member: boolean; trail: TrailRow[] } | undefined> {
  const { rows } = await transactionWithTrailForApp(db, dialect, { id, appId })
  if (rows.length === 0) return undefined
  const trail: TrailRow[] = []
  for (const joined of rows) {
    if (joined.tr_id === null || joined.tr_kind === null) continue
    trail.push({
      id: joined.tr_id,
      transaction_id: joined.id,
      kind: joined.tr_kind,
      created: joined.tr_created,
      amount: joined.tr_amount,
      balance: joined.tr_balance,
      fee_flat: joined.tr_fee_flat,
      fee_rate: joined.tr_fee_rate,
      descriptor: joined.tr_descriptor,
      line_id: joined.tr_line_id,
      dispute_id: joined.tr_dispute_id,
      dispute_outcome: joined.tr_dispute_outcome,
      actor_type: joined.tr_actor_type,
      actor_id: joined.tr_actor_id,
      actor_email: joined.tr_actor_email,
    })
  }
  return { row: transactionColumns(rows[0]), member: isMember(rows[0].member), trail }
}

/**
 * GET /transactions/{id} behind the read cache: merchants poll a transaction until it settles,
 * and between writes the answer cannot change (see core/db/read-cache.ts; PostgreSQL always
 * reads). The cache keeps the caller's shape of the answer (`shape`, the service's DTO), so a
 * hit costs no mapping; it is keyed by app as well, because the answer includes the
 * membership check. Only answers to members are kept.
 */
export function createTransactionReader<V>(
  database: { db: PaymentsDb; dialect: DialectName },
  options: { clock: Clock; maxLagMs: number },
  shape: (row: TransactionRow, trail: TrailRow[]) => V,
) {
  const reads = createReadCache<V>(database, options)
  return async (id: string, appId: string): Promise<{ member: false } | { member: true; value: V } | undefined> => {
    const key = `${appId}/${id}`
    const version = reads.version()
    const cached = version === undefined ? undefined : reads.get(key, version)
    if (cached !== undefined) return { member: true, value: cached }
    const found = await findTransactionWithTrailForApp(database.db, database.dialect, id, appId)
    if (!found) return undefined
    if (!found.member) return { member: false }
    const value = shape(found.row, found.trail)
    if (version !== undefined) reads.set(key, version, value)
    return { member: true, value }
  }
}

/** What a money movement needs of the merchant (pricing, currency) besides the transaction. */
interface MovementRow extends TransactionRow {
  member: unknown
  m_currency: string
  m_fee_rate_ppm: number
  m_fee_flat: number
  m_dispute_fee: number
}

/**
 * The transaction and its merchant's pricing, one statement; on PostgreSQL only the
 * transaction's row is locked (the merchant's balance moves by an in-place addition).
 */
function lockedWithPricing(db: PaymentsDb, id: string, dialect: DialectName) {
  const query = db
    .selectFrom('payments_transactions')
    .innerJoin('payments_merchants', 'payments_merchants.id', 'payments_transactions.merchant_id')
    .selectAll('payments_transactions')
    .select([
      'payments_merchants.currency as m_currency',
      'payments_merchants.fee_rate_ppm as m_fee_rate_ppm',
      'payments_merchants.fee_flat as m_fee_flat',
      'payments_merchants.dispute_fee as m_dispute_fee',
    ])
    .where('payments_transactions.id', '=', id)
  return dialect === 'postgres' ? query.forUpdate('payments_transactions') : query
}

const transactionForMove = prepared<PaymentsTables, 'id' | 'appId', MovementRow>((db, p, dialect) =>
  lockedWithPricing(db, p.id, dialect).select((eb) => appIsMember(eb, p.appId)),
)

function movementMerchant(found: MovementRow): MovementMerchant {
  return {
    id: found.merchant_id,
    test: found.test,
    currency: found.m_currency,
    fee_rate_ppm: found.m_fee_rate_ppm,
    fee_flat: found.m_fee_flat,
    dispute_fee: found.m_dispute_fee,
  }
}

/**
 * Inside a database transaction: the transaction row, locked on PostgreSQL until the end of the
 * database transaction, with the merchant's pricing and the caller's membership — one statement.
 */
export async function findTransactionForMove(
  db: PaymentsDb,
  dialect: DialectName,
  id: string,
  appId: string,
): Promise<{ row: TransactionRow; member: boolean; merchant: MovementMerchant } | undefined> {
  const [found] = (await transactionForMove(db, dialect, { id, appId })).rows
  if (!found) return undefined
  return { row: transactionColumns(found), member: isMember(found.member), merchant: movementMerchant(found) }
}

const transactionWithPricing = prepared<PaymentsTables, 'id', Omit<MovementRow, 'member'>>((db, p, dialect) => lockedWithPricing(db, p.id, dialect))

/**
 * The same read for a movement the card network starts (a dispute): no app asks, so no
 * membership; the transaction's row locked on PostgreSQL, the merchant's pricing with it.
 */
export async function findTransactionWithPricingForUpdate(
  db: PaymentsDb,
  dialect: DialectName,
  id: string,
): Promise<{ row: TransactionRow; merchant: MovementMerchant } | undefined> {
  const [found] = (await transactionWithPricing(db, dialect, { id })).rows
  if (!found) return undefined
  return { row: transactionColumns(found), merchant: movementMerchant({ ...found, member: null }) }
}

const setCounters = prepared<PaymentsTables, 'id' | 'captured' | 'refunded' | 'voided' | 'disputed' | 'lost', never>((db, p) =>
  db
    .updateTable('payments_transactions')
    .set({ captured_amount: p.captured, refunded_amount: p.refunded, voided_amount: p.voided, disputed_amount: p.disputed, lost_amount: p.lost })
    .where('id', '=', p.id),
)

/** Writes all five counters of a transaction read earlier in the same (locking) database transaction. */
export async function writeCounters(db: PaymentsWrites, dialect: DialectName, row: TransactionRow): Promise<void> {
  await setCounters(db, dialect, {
    id: row.id,
    captured: row.captured_amount,
    refunded: row.refunded_amount,
    voided: row.voided_amount,
    disputed: row.disputed_amount,
    lost: row.lost_amount,
  })
}

/** What a transaction list can be narrowed to (docs/payments-merchant-api.md, "Filters"). */
export interface TransactionFilter {
  successful?: boolean
  recurring?: boolean
  status?: TransactionStatus
  currency?: string
  /** Minor units of the transaction's currency, both bounds included. */
  amountMin?: number
  amountMax?: number
  /** ISO 8601 instants: `created >= createdFrom` and `created < createdBefore`. */
  createdFrom?: string
  createdBefore?: string
  last4?: string
  search?: string
}

/**
 * The status a transaction is listed under, from its counters, in this order: `declined` (not
 * successful), `refunded` (something refunded), `captured` (something captured), `voided`
 * (all of it voided, nothing captured), `authorized` (nothing captured, something still pending).
 */
export const TRANSACTION_STATUSES = ['authorized', 'captured', 'refunded', 'voided', 'declined'] as const
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number]

type TransactionsWhere = ExpressionBuilder<PaymentsTables, 'payments_transactions'>

function statusCondition(eb: TransactionsWhere, status: TransactionStatus) {
  if (status === 'declined') return eb('successful', '=', 0)
  const successful = eb('successful', '=', 1)
  if (status === 'refunded') return eb.and([successful, eb('refunded_amount', '>', 0)])
  if (status === 'captured') return eb.and([successful, eb('captured_amount', '>', 0), eb('refunded_amount', '=', 0)])
  if (status === 'voided') return eb.and([successful, eb('captured_amount', '=', 0), eb('voided_amount', '=', eb.ref('amount'))])
  return eb.and([successful, eb('captured_amount', '=', 0), eb('voided_amount', '<', eb.ref('amount'))])
}

/** `text` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`
}

async function listTransactionsOfMerchant(
  db: PaymentsDb,
  merchantId: string,
  page: PageRequest,
  filter: TransactionFilter = {},
): Promise<TransactionRow[]> {
  let query = db.selectFrom('payments_transactions').selectAll().where('merchant_id', '=', merchantId)
  if (filter.successful !== undefined) query = query.where('successful', '=', filter.successful ? 1 : 0)
  if (filter.recurring !== undefined) query = query.where('recurring', '=', filter.recurring ? 1 : 0)
  const status = filter.status
  if (status !== undefined) query = query.where((eb) => statusCondition(eb, status))
  if (filter.currency !== undefined) query = query.where('currency', '=', filter.currency)
  if (filter.amountMin !== undefined) query = query.where('amount', '>=', filter.amountMin)
  if (filter.amountMax !== undefined) query = query.where('amount', '<=', filter.amountMax)
  if (filter.createdFrom !== undefined) query = query.where('created', '>=', filter.createdFrom)
  if (filter.createdBefore !== undefined) query = query.where('created', '<', filter.createdBefore)
  if (filter.last4 !== undefined) query = query.where('card_last4', '=', filter.last4)
  const search = filter.search
  if (search !== undefined) {
    // An id is found by equality; any text by a case-insensitive substring of the descriptor,
    // the payment link's text or the custom data (where the hosted page keeps `reference`).
    const pattern = containsPattern(search)
    const contains = (column: 'descriptor' | 'text' | 'custom') => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`
    query = query.where((eb) => eb.or([eb('id', '=', search), contains('descriptor'), contains('text'), contains('custom')]))
  }
  return applyPage(query, 'id', page).execute()
}

/** Per UTC day and currency: successful authorizations (count, amount) and the captures and refunds made that day. */
interface VolumeRow {
  day: string
  currency: string
  count: number
  authorized: number
  captured: number
  refunded: number
}

/**
 * A merchant's volume between two instants, summed by the database (one row per day and
 * currency, never the transactions themselves): authorizations by the day they were made,
 * captures and refunds by the day they were made.
 */
async function volumeRows(db: PaymentsDb, merchantId: string, from: string, before: string): Promise<VolumeRow[]> {
  const day = sql<string>`substr(${sql.ref('payments_transactions.created')}, 1, 10)`
  const authorized = await db
    .selectFrom('payments_transactions')
    .select((eb) => [day.as('day'), 'currency', eb.fn.countAll().as('count'), eb.fn.sum('amount').as('amount')])
    .where('merchant_id', '=', merchantId)
    .where('successful', '=', 1)
    .where('created', '>=', from)
    .where('created', '<', before)
    .groupBy([day, 'currency'])
    .execute()
  const trailDay = sql<string>`substr(${sql.ref('payments_trail.created')}, 1, 10)`
  const moved = await db
    .selectFrom('payments_trail')
    .innerJoin('payments_transactions', 'payments_transactions.id', 'payments_trail.transaction_id')
    .select((eb) => [trailDay.as('day'), 'payments_transactions.currency as currency', 'payments_trail.kind as kind', eb.fn.sum('payments_trail.amount').as('amount')])
    .where('payments_transactions.merchant_id', '=', merchantId)
    .where('payments_trail.kind', 'in', ['capture', 'refund'])
    .where('payments_trail.created', '>=', from)
    .where('payments_trail.created', '<', before)
    .groupBy([trailDay, 'payments_transactions.currency', 'payments_trail.kind'])
    .execute()
  const rows = new Map<string, VolumeRow>()
  const rowOf = (day: string, currency: string) => {
    const key = `${day} ${currency}`
    let row = rows.get(key)
    if (!row) {
      row = { day, currency, count: 0, authorized: 0, captured: 0, refunded: 0 }
      rows.set(key, row)
    }
    return row
  }
  // PostgreSQL answers count and sum as strings (bigint, numeric); SQLite as numbers.
  for (const item of authorized) {
    const row = rowOf(item.day, item.currency)
    row.count = Number(item.count)
    row.authorized = Number(item.amount)
  }
  for (const item of moved) {
    const row = rowOf(item.day, item.currency)
    if (item.kind === 'capture') row.captured = Number(item.amount)
    else row.refunded = Number(item.amount)
  }
  return [...rows.values()]
}

type TrailKey = keyof TrailRow
const trailInsert = prepared<PaymentsTables, TrailKey, never>((db, p) =>
  db.insertInto('payments_trail').values({
    id: p.id,
    transaction_id: p.transaction_id,
    kind: p.kind,
    created: p.created,
    amount: p.amount,
    balance: p.balance,
    fee_flat: p.fee_flat,
    fee_rate: p.fee_rate,
    descriptor: p.descriptor,
    line_id: p.line_id,
    dispute_id: p.dispute_id,
    dispute_outcome: p.dispute_outcome,
    actor_type: p.actor_type,
    actor_id: p.actor_id,
    actor_email: p.actor_email,
  }),
)

export async function insertTrail(db: PaymentsWrites, dialect: DialectName, row: TrailRow): Promise<void> {
  await trailInsert(db, dialect, row)
}

const trailOfOne = prepared<PaymentsTables, 'id', TrailRow>((db, p) =>
  db.selectFrom('payments_trail').selectAll().where('transaction_id', '=', p.id).orderBy('created', 'asc').orderBy('id', 'asc'),
)

/** The trail of one transaction, oldest entry first. */
export async function trailOf(db: PaymentsDb, dialect: DialectName, transactionId: string): Promise<TrailRow[]> {
  return (await trailOfOne(db, dialect, { id: transactionId })).rows
}

/** The trails of the given transactions, oldest entry first. */
async function trailsOf(db: PaymentsDb, transactionIds: string[]): Promise<Map<string, TrailRow[]>> {
  const byTransaction = new Map<string, TrailRow[]>()
  if (transactionIds.length === 0) return byTransaction
  const rows = await db
    .selectFrom('payments_trail')
    .selectAll()
    .where('transaction_id', 'in', transactionIds)
    .orderBy('created', 'asc')
    .orderBy('id', 'asc')
    .execute()
  for (const row of rows) {
    const list = byTransaction.get(row.transaction_id)
    if (list) list.push(row)
    else byTransaction.set(row.transaction_id, [row])
  }
  return byTransaction
}

// The merchant API's lists and the dashboard's volume are routed reads (core/db/read-replica.ts):
// with a standby they run there once it has replayed every write acknowledged before them.

/** A page of a merchant's transactions with their trails, both from one connection. */
export function transactionPageOfMerchant(
  database: Pick<Database, 'routedRead'>,
  merchantId: string,
  page: PageRequest,
  filter: TransactionFilter = {},
): Promise<{ rows: TransactionRow[]; trails: Map<string, TrailRow[]> }> {
  return database.routedRead(async (db: PaymentsDb) => {
    const rows = await listTransactionsOfMerchant(db, merchantId, page, filter)
    return { rows, trails: await trailsOf(db, rows.map((row) => row.id)) }
  })
}

/** A merchant's volume between two instants (see `volumeRows`). */
export function volumeOfMerchant(database: Pick<Database, 'routedRead'>, merchantId: string, from: string, before: string): Promise<VolumeRow[]> {
  return database.routedRead((db: PaymentsDb) => volumeRows(db, merchantId, from, before))
}

export async function insertCard(db: PaymentsDb, row: CardsTable): Promise<void> {
  await db.insertInto('payments_cards').values(row).execute()
}

export async function findCard(db: PaymentsDb, id: string): Promise<CardsTable | undefined> {
  return db.selectFrom('payments_cards').selectAll().where('id', '=', id).executeTakeFirst()
}
