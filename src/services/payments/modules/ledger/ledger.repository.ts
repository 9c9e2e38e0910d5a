import type { IdGenerator } from '../../../../core/ids.ts'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import type { BalanceEffect } from '../../money/balance-effect.ts'
import type { LineKind, LineRow, MerchantRow, PaymentsDb, PaymentsTables, PaymentsWrites } from '../../tables.ts'

/** What a ledger line needs of its merchant. */
type LedgerMerchant = Pick<MerchantRow, 'id' | 'test'>

export interface PostLineInput {
  merchant: LedgerMerchant
  kind: LineKind
  effect: BalanceEffect
  created: string
  transactionId: string | null
  amount: { currency: string; amount: number } | null
  description?: string | null
}

const lineInsert = prepared<PaymentsTables, keyof LineRow, never>((db, p) =>
  db.insertInto('payments_lines').values({
    id: p.id,
    merchant_id: p.merchant_id,
    test: p.test,
    created: p.created,
    kind: p.kind,
    balance: p.balance,
    fee: p.fee,
    description: p.description,
    transaction_id: p.transaction_id,
    amount_currency: p.amount_currency,
    amount: p.amount,
  }),
)

// An in-place addition to one shard of the balance: no read, and captures of different
// transactions mostly land on different shards, so they do not queue on one row lock.
const balanceMove = prepared<PaymentsTables, 'id' | 'shard' | 'delta', never>((db, p) =>
  db
    .insertInto('payments_balance_shards')
    .values({ merchant_id: p.id, shard: p.shard, balance: p.delta })
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'shard']).doUpdateSet((eb) => ({ balance: eb('payments_balance_shards.balance', '+', eb.ref('excluded.balance')) })),
    ),
)

const BALANCE_SHARDS = 16

/** The shard of a movement: from the transaction id's last hex digit (its counter), else 0. */
function shardOf(transactionId: string | null): number {
  const digit = transactionId === null ? Number.NaN : Number.parseInt(transactionId.slice(-1), 16)
  return Number.isNaN(digit) ? 0 : digit % BALANCE_SHARDS
}

/**
 * Appends one ledger line and moves the merchant's balance (one shard of it) by the same
 * amount. Call it inside the database transaction that makes the movement, so the sum of a
 * merchant's lines always equals its balance.
 */
export async function postLine(db: PaymentsWrites, dialect: DialectName, ids: IdGenerator, input: PostLineInput): Promise<string> {
  const id = ids.timeOrdered()
  await lineInsert(db, dialect, {
    id,
    merchant_id: input.merchant.id,
    test: input.merchant.test,
    created: input.created,
    kind: input.kind,
    balance: input.effect.balance,
    fee: input.effect.feeFlat + input.effect.feeRate,
    description: input.description ?? null,
    transaction_id: input.transactionId,
    amount_currency: input.amount?.currency ?? null,
    amount: input.amount?.amount ?? null,
  })
  await balanceMove(db, dialect, { id: input.merchant.id, shard: shardOf(input.transactionId), delta: input.effect.balance })
  return id
}

export async function listLinesOfMerchant(db: PaymentsDb, merchantId: string, page: PageRequest): Promise<LineRow[]> {
  return applyPage(db.selectFrom('payments_lines').selectAll().where('merchant_id', '=', merchantId), 'id', page).execute()
}

export async function findLine(db: PaymentsDb, id: string): Promise<LineRow | undefined> {
  return db.selectFrom('payments_lines').selectAll().where('id', '=', id).executeTakeFirst()
}
