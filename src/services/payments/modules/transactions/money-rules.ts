import type { BalanceEffect } from '../../money/balance-effect.ts'
import { convert, type FxTable, rateOf } from '../../money/fx.ts'
import type { MerchantRow, TransactionRow } from '../../tables.ts'

// ---------------------------------------------------------------------------------------------
// The rules of moving money, in one place: how much of a transaction each movement may take,
// and what each movement does to the merchant's balance. Amount rules (Paylike's, as its
// live-API client tests show):
//   pendingAmount = amount − capturedAmount − voidedAmount   (what can still be captured or voided)
//   refundable    = capturedAmount − refundedAmount − lost disputes
//   disputable    = capturedAmount − refundedAmount − disputedAmount
// Refunds do not lower capturedAmount.
// ---------------------------------------------------------------------------------------------

export function pendingOf(row: TransactionRow): number {
  return row.amount - row.captured_amount - row.voided_amount
}

export function refundableOf(row: TransactionRow): number {
  return row.captured_amount - row.refunded_amount - row.lost_amount
}

export function disputableOf(row: TransactionRow): number {
  return row.captured_amount - row.refunded_amount - row.disputed_amount
}

/** What a money movement needs of the merchant: its funding currency and its pricing. */
export type MovementMerchant = Pick<MerchantRow, 'id' | 'test' | 'currency' | 'fee_rate_ppm' | 'fee_flat' | 'dispute_fee'>

export interface LedgerRules {
  fx: FxTable
  markupPpm: number
}

/**
 * A capture credits the merchant: the amount converted into the funding currency (markup off,
 * rounded down), less the flat fee and the rate fee (rate × converted, rounded up).
 */
export function captureEffect(rules: LedgerRules, merchant: MovementMerchant, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'credit' })
  const feeFlat = merchant.fee_flat
  const feeRate = rateOf(converted, merchant.fee_rate_ppm)
  return { converted, feeFlat, feeRate, balance: converted - feeFlat - feeRate }
}

/** A refund debits the merchant the converted amount (markup on, rounded up); fees are not returned. */
export function refundEffect(rules: LedgerRules, merchant: MovementMerchant, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'debit' })
  return { converted, feeFlat: 0, feeRate: 0, balance: -converted }
}

/** A lost dispute debits the disputed amount (as a refund) plus the merchant's dispute fee. */
export function disputeLossEffect(rules: LedgerRules, merchant: MovementMerchant, amount: number, currency: string): BalanceEffect {
  const converted = convert(rules.fx, amount, currency, merchant.currency, { markupPpm: rules.markupPpm, direction: 'debit' })
  return { converted, feeFlat: merchant.dispute_fee, feeRate: 0, balance: -converted - merchant.dispute_fee }
}

