import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import { lockForUpdate } from '../../../../core/db/transaction.ts'
import type { DialectName } from '../../../../core/db/create-db.ts'
import type { CardsTable, PaymentsDb, TrailRow, TransactionRow } from '../../tables.ts'

export async function insertTransaction(db: PaymentsDb, row: TransactionRow): Promise<void> {
  await db.insertInto('payments_transactions').values(row).execute()
}

export async function findTransaction(db: PaymentsDb, id: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('payments_transactions').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Reads the transaction and, on PostgreSQL, locks its row until the database transaction ends. */
export async function findTransactionForUpdate(db: PaymentsDb, dialect: DialectName, id: string): Promise<TransactionRow | undefined> {
  return lockForUpdate(dialect, db.selectFrom('payments_transactions').selectAll().where('id', '=', id)).executeTakeFirst()
}

/**
 * The transaction if `appId` belongs to its merchant: one query, so the hot read path (GET
 * /transactions/{id}) costs one round trip before the trail. `member` is false when the
 * transaction exists but the app is not a member.
 */
export async function findTransactionForApp(db: PaymentsDb, id: string, appId: string): Promise<{ row: TransactionRow; member: boolean } | undefined> {
  const row = await db
    .selectFrom('payments_transactions')
    .leftJoin('payments_merchant_apps', (join) =>
      join.onRef('payments_merchant_apps.merchant_id', '=', 'payments_transactions.merchant_id').on('payments_merchant_apps.app_id', '=', appId),
    )
    .selectAll('payments_transactions')
    .select('payments_merchant_apps.app_id as member_app_id')
    .where('payments_transactions.id', '=', id)
    .executeTakeFirst()
  if (!row) return undefined
  const { member_app_id, ...transaction } = row
  return { row: transaction, member: member_app_id !== null }
}

export async function updateCounters(
  db: PaymentsDb,
  id: string,
  counters: Partial<Pick<TransactionRow, 'captured_amount' | 'refunded_amount' | 'voided_amount' | 'disputed_amount' | 'lost_amount'>>,
): Promise<void> {
  await db.updateTable('payments_transactions').set(counters).where('id', '=', id).execute()
}

export async function listTransactionsOfMerchant(db: PaymentsDb, merchantId: string, page: PageRequest): Promise<TransactionRow[]> {
  return applyPage(db.selectFrom('payments_transactions').selectAll().where('merchant_id', '=', merchantId), 'id', page).execute()
}

export async function insertTrail(db: PaymentsDb, row: TrailRow): Promise<void> {
  await db.insertInto('payments_trail').values(row).execute()
}

/** The trails of the given transactions, oldest entry first. */
export async function trailsOf(db: PaymentsDb, transactionIds: string[]): Promise<Map<string, TrailRow[]>> {
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

export async function insertCard(db: PaymentsDb, row: CardsTable): Promise<void> {
  await db.insertInto('payments_cards').values(row).execute()
}

export async function findCard(db: PaymentsDb, id: string): Promise<CardsTable | undefined> {
  return db.selectFrom('payments_cards').selectAll().where('id', '=', id).executeTakeFirst()
}
