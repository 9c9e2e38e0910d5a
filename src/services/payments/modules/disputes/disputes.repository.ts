import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import type { DisputesTable, FraudsTable, PaymentsDb } from '../../tables.ts'

export interface DisputeFilter {
  merchantId: string
  transactionId?: string
}

export async function insertDispute(db: PaymentsDb, row: DisputesTable): Promise<void> {
  await db.insertInto('payments_disputes').values(row).execute()
}

export async function findDispute(db: PaymentsDb, id: string): Promise<DisputesTable | undefined> {
  return db.selectFrom('payments_disputes').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The transaction a dispute is about, read without locking anything. */
export async function findDisputedTransactionId(db: PaymentsDb, id: string): Promise<string | undefined> {
  return (await db.selectFrom('payments_disputes').select('transaction_id').where('id', '=', id).executeTakeFirst())?.transaction_id
}

export async function setDisputeOutcome(db: PaymentsDb, id: string, outcome: 'won' | 'lost', decided: string): Promise<void> {
  await db.updateTable('payments_disputes').set({ outcome, decided }).where('id', '=', id).execute()
}

export async function listDisputes(db: PaymentsDb, filter: DisputeFilter, page: PageRequest): Promise<DisputesTable[]> {
  let query = db.selectFrom('payments_disputes').selectAll().where('merchant_id', '=', filter.merchantId)
  if (filter.transactionId) query = query.where('transaction_id', '=', filter.transactionId)
  return applyPage(query, 'id', page).execute()
}

export async function insertFraud(db: PaymentsDb, row: FraudsTable): Promise<void> {
  await db.insertInto('payments_frauds').values(row).execute()
}

export async function findFraud(db: PaymentsDb, id: string): Promise<FraudsTable | undefined> {
  return db.selectFrom('payments_frauds').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function listFrauds(db: PaymentsDb, filter: DisputeFilter, page: PageRequest): Promise<FraudsTable[]> {
  let query = db.selectFrom('payments_frauds').selectAll().where('merchant_id', '=', filter.merchantId)
  if (filter.transactionId) query = query.where('transaction_id', '=', filter.transactionId)
  return applyPage(query, 'id', page).execute()
}
