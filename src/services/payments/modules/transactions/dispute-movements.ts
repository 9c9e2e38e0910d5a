import type { PaymentsContext } from '../../context.ts'
import { NO_EFFECT } from '../../money/balance-effect.ts'
import type { Transaction } from 'kysely'
import type { PaymentsDb, PaymentsTables, TransactionRow } from '../../tables.ts'
import { postLine } from '../ledger/index.ts'
import { disputableOf, disputeLossEffect, type MovementMerchant } from './money-rules.ts'
import * as repo from './transactions.repository.ts'
import { inTransaction, trailRow } from './transactions.service.ts'

/** A transaction locked for a dispute's movement; hand it back to the same port, unchanged. */
export interface LockedTransaction {
  readonly id: string
  readonly merchantId: string
  readonly currency: string
  /** What a new dispute may still cover: captured, not refunded, not disputed already. */
  readonly disputable: number
  readonly row: TransactionRow
  readonly merchant: MovementMerchant
}

/**
 * The money side of disputes, owned here with every other movement: the disputes module keeps
 * its own rows (disputes, fraud alerts) and asks this port, inside one database transaction,
 * for the trail entry, the counters and (for a lost dispute) the ledger line.
 */
export function createDisputeMovements(ctx: PaymentsContext) {
  const dialect = ctx.database.dialect
  return {
    /** Runs `work` in one database transaction; a conflict that outlived the retries is a 409. */
    inTransaction: <T>(work: (trx: Transaction<PaymentsTables>) => Promise<T>): Promise<T> => inTransaction(ctx, work),

    /** The transaction, locked (PostgreSQL) until the database transaction ends; the order every movement takes. */
    async lock(trx: PaymentsDb, transactionId: string): Promise<LockedTransaction | undefined> {
      const found = await repo.findTransactionWithPricingForUpdate(trx, dialect, transactionId)
      if (!found) return undefined
      const { row, merchant } = found
      return { id: row.id, merchantId: row.merchant_id, currency: row.currency, disputable: disputableOf(row), row, merchant }
    },

    /** A dispute opened: `disputedAmount` grows and a trail entry with no effect on the balance. */
    async opened(trx: PaymentsDb, locked: LockedTransaction, dispute: { id: string; amount: number; created: string }): Promise<void> {
      const { row } = locked
      await repo.insertTrail(trx, dialect, trailRow(ctx.ids, row.id, 'dispute', dispute.created, dispute.amount, NO_EFFECT, null, null, { id: dispute.id, outcome: null }))
      await repo.writeCounters(trx, dialect, { ...row, disputed_amount: row.disputed_amount + dispute.amount })
    },

    /**
     * A dispute decided. Won: a trail entry, nothing else. Lost: the amount goes back to the
     * cardholder and the merchant pays the dispute fee — one ledger line (balance −(amount
     * converted + fee)), a trail entry with its lineId, and the amount no longer refundable.
     */
    async decided(trx: PaymentsDb, locked: LockedTransaction, dispute: { id: string; amount: number }, outcome: 'won' | 'lost', created: string): Promise<void> {
      const { row, merchant } = locked
      let effect = NO_EFFECT
      let lineId: string | null = null
      if (outcome === 'lost') {
        effect = disputeLossEffect({ fx: ctx.fx, markupPpm: ctx.config.fxMarkupPpm }, merchant, dispute.amount, row.currency)
        lineId = await postLine(trx, dialect, ctx.ids, {
          merchant,
          kind: 'dispute',
          effect,
          created,
          transactionId: row.id,
          amount: { currency: row.currency, amount: dispute.amount },
          description: `Dispute ${dispute.id} lost`,
        })
        await repo.writeCounters(trx, dialect, { ...row, lost_amount: row.lost_amount + dispute.amount })
      }
      await repo.insertTrail(trx, dialect, trailRow(ctx.ids, row.id, 'dispute', created, dispute.amount, effect, null, lineId, { id: dispute.id, outcome }))
    },
  }
}

export type DisputeMovements = ReturnType<typeof createDisputeMovements>
