import type { IdGenerator } from '../../../../core/ids.ts'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import type { LineKind, LineRow, MerchantRow, PaymentsDb, PaymentsTables } from '../../tables.ts'
import { convert, type FxTable, rateOf } from '../../money/fx.ts'

/** The effect of one money movement on the merchant's balance, in the merchant's currency. */
export interface BalanceEffect {
  /** The movement's amount converted into the merchant currency (before fees). */
  converted: number
  feeFlat: number
  feeRate: number
  /** Signed: what the merchant's balance changes by. */
  balance: number
}

/** What the ledger needs of a merchant. */
export type LedgerMerchant = Pick<MerchantRow, 'id' | 'test' | 'currency' | 'fee_rate_ppm' | 'fee_flat' | 'dispute_fee'>

export interface LedgerRules {
  fx: FxTable
  markupPpm: number
}

/**
 * A capture credits the merchant: the amount converted into the funding currency (markup off,
 * rounded down), less the flat fee and the rate fee (rate × converted, rounded up).
 */
export function captureEffect(rules: LedgerRules, merchant: LedgerMerchant, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'credit' })
  const feeFlat = merchant.fee_flat
  const feeRate = rateOf(converted, merchant.fee_rate_ppm)
  return { converted, feeFlat, feeRate, balance: converted - feeFlat - feeRate }
}

/** A refund debits the merchant the converted amount (markup on, rounded up); fees are not returned. */
export function refundEffect(rules: LedgerRules, merchant: LedgerMerchant, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'debit' })
  return { converted, feeFlat: 0, feeRate: 0, balance: -converted }
}

/** A lost dispute debits the disputed amount (as a refund) plus the merchant's dispute fee. */
export function disputeLossEffect(rules: LedgerRules, merchant: LedgerMerchant, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'debit' })
  return { converted, feeFlat: merchant.dispute_fee, feeRate: 0, balance: -converted - merchant.dispute_fee }
}

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

export const BALANCE_SHARDS = 16

/** The shard of a movement: from the transaction id's last hex digit (its counter), else 0. */
export function shardOf(transactionId: string | null): number {
  const digit = transactionId === null ? Number.NaN : Number.parseInt(transactionId.slice(-1), 16)
  return Number.isNaN(digit) ? 0 : digit % BALANCE_SHARDS
}

/**
 * Appends one ledger line and moves the merchant's balance (one shard of it) by the same
 * amount. Call it inside the database transaction that makes the movement, so the sum of a
 * merchant's lines always equals its balance.
 */
export async function postLine(db: PaymentsDb, dialect: DialectName, ids: IdGenerator, input: PostLineInput): Promise<string> {
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
