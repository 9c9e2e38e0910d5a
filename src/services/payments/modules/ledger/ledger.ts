import type { IdGenerator } from '../../../../core/ids.ts'
import type { LineKind, MerchantRow, PaymentsDb } from '../../tables.ts'
import { addToBalance } from '../merchants/merchants.repository.ts'
import { convert, type FxTable, rateOf } from './fx.ts'

/** The effect of one money movement on the merchant's balance, in the merchant's currency. */
export interface BalanceEffect {
  /** The movement's amount converted into the merchant currency (before fees). */
  converted: number
  feeFlat: number
  feeRate: number
  /** Signed: what the merchant's balance changes by. */
  balance: number
}

export interface LedgerRules {
  fx: FxTable
  markupPpm: number
}

/**
 * A capture credits the merchant: the amount converted into the funding currency (markup off,
 * rounded down), less the flat fee and the rate fee (rate × converted, rounded up).
 */
export function captureEffect(rules: LedgerRules, merchant: MerchantRow, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'credit' })
  const feeFlat = merchant.fee_flat
  const feeRate = rateOf(converted, merchant.fee_rate_ppm)
  return { converted, feeFlat, feeRate, balance: converted - feeFlat - feeRate }
}

/** A refund debits the merchant the converted amount (markup on, rounded up); fees are not returned. */
export function refundEffect(rules: LedgerRules, merchant: MerchantRow, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'debit' })
  return { converted, feeFlat: 0, feeRate: 0, balance: -converted }
}

/** A lost dispute debits the disputed amount (as a refund) plus the merchant's dispute fee. */
export function disputeLossEffect(rules: LedgerRules, merchant: MerchantRow, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'debit' })
  return { converted, feeFlat: merchant.dispute_fee, feeRate: 0, balance: -converted - merchant.dispute_fee }
}

export interface PostLineInput {
  merchant: MerchantRow
  kind: LineKind
  effect: BalanceEffect
  created: string
  transactionId: string | null
  amount: { currency: string; amount: number } | null
  description?: string | null
}

/**
 * Appends one ledger line and moves the merchant's balance by the same amount. Call it inside
 * the database transaction that makes the movement, so the sum of a merchant's lines always
 * equals its balance.
 */
export async function postLine(db: PaymentsDb, ids: IdGenerator, input: PostLineInput): Promise<string> {
  const id = ids.timeOrdered()
  await db
    .insertInto('payments_lines')
    .values({
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
    .execute()
  await addToBalance(db, input.merchant.id, input.effect.balance)
  return id
}
