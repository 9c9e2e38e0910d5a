import { applyPage, type PageRequest } from '../../../../core/http/pagination.ts'
import { formatMinor } from '../../../../core/money.ts'
import type { PaymentsContext } from '../../context.ts'
import { conflict, fieldError, notFound } from '../../http/errors.ts'
import type { DisputesTable, FraudsTable } from '../../tables.ts'
import { disputeLossEffect, postLine } from '../ledger/ledger.ts'
import { findMerchant } from '../merchants/merchants.repository.ts'
import type { MerchantsService } from '../merchants/merchants.service.ts'
import { findTransaction, findTransactionForUpdate, insertTrail, writeCounters } from '../transactions/transactions.repository.ts'
import { inTransaction, trailRow } from '../transactions/transactions.service.ts'
import { DISPUTE_REASONS, type DisputeDto, type DisputeReasonCode, FRAUD_REASONS, type FraudDto } from './disputes.schemas.ts'

/** How long a merchant has to answer a dispute. */
export const DISPUTE_RESPONSE_DAYS = 10

export function toDispute(row: DisputesTable): DisputeDto {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    transactionId: row.transaction_id,
    created: row.created,
    amount: row.amount,
    reason: { code: row.reason_code, title: DISPUTE_REASONS[row.reason_code as DisputeReasonCode] ?? 'Other' },
    due: row.due,
    ...(row.outcome === 'won' ? { won: true } : row.outcome === 'lost' ? { lost: true } : {}),
  }
}

export function toFraud(row: FraudsTable): FraudDto {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    transactionId: row.transaction_id,
    created: row.created,
    ...(row.reported === null ? {} : { reported: row.reported }),
    ...(row.reason === null ? {} : { reason: row.reason }),
  }
}

export interface ListFilter {
  merchantId?: string
  transactionId?: string
}

export function createDisputesService(ctx: PaymentsContext, merchants: MerchantsService) {
  const db = ctx.db
  const requireFilter = async (appId: string, filter: ListFilter): Promise<string> => {
    if (!filter.merchantId) throw fieldError('filter[merchantId]', 'is required')
    await merchants.requireMerchant(appId, filter.merchantId)
    return filter.merchantId
  }

  return {
    async listDisputes(appId: string, filter: ListFilter, page: PageRequest): Promise<DisputeDto[]> {
      const merchantId = await requireFilter(appId, filter)
      let query = db.selectFrom('payments_disputes').selectAll().where('merchant_id', '=', merchantId)
      if (filter.transactionId) query = query.where('transaction_id', '=', filter.transactionId)
      return (await applyPage(query, 'id', page).execute()).map(toDispute)
    },

    async getDispute(appId: string, id: string): Promise<DisputeDto> {
      const row = await db.selectFrom('payments_disputes').selectAll().where('id', '=', id).executeTakeFirst()
      if (!row) throw notFound('Dispute')
      await merchants.requireMerchant(appId, row.merchant_id)
      return toDispute(row)
    },

    async listFrauds(appId: string, filter: ListFilter, page: PageRequest): Promise<FraudDto[]> {
      const merchantId = await requireFilter(appId, filter)
      let query = db.selectFrom('payments_frauds').selectAll().where('merchant_id', '=', merchantId)
      if (filter.transactionId) query = query.where('transaction_id', '=', filter.transactionId)
      return (await applyPage(query, 'id', page).execute()).map(toFraud)
    },

    async getFraud(appId: string, id: string): Promise<FraudDto> {
      const row = await db.selectFrom('payments_frauds').selectAll().where('id', '=', id).executeTakeFirst()
      if (!row) throw notFound('Fraud alert')
      await merchants.requireMerchant(appId, row.merchant_id)
      return toFraud(row)
    },

    /**
     * A dispute arrives from the card network (in test mode: the operator's CLI). It covers at
     * most what was captured and not yet refunded or disputed (default: all of it), sets
     * `disputedAmount` and appends a trail entry with no effect on the balance yet.
     */
    async open(transactionId: string, options: { amount?: number; reason?: number }): Promise<DisputeDto> {
      const reason = options.reason ?? 1
      if (!(reason in DISPUTE_REASONS)) throw fieldError('reason', `must be one of ${Object.keys(DISPUTE_REASONS).join(', ')}`)
      return inTransaction(ctx, async (trx) => {
        const row = await findTransactionForUpdate(trx, ctx.database.dialect, transactionId)
        if (!row) throw notFound('Transaction')
        const disputable = row.captured_amount - row.refunded_amount - row.disputed_amount
        const amount = options.amount ?? disputable
        if (disputable <= 0) throw fieldError('amount', 'Nothing of this transaction is captured and undisputed')
        if (!Number.isSafeInteger(amount) || amount <= 0 || amount > disputable)
          throw fieldError('amount', `Can dispute at most ${formatMinor(disputable, row.currency)}`)
        const now = ctx.clock.now()
        const dispute: DisputesTable = {
          id: ctx.ids.timeOrdered(),
          merchant_id: row.merchant_id,
          transaction_id: row.id,
          created: now.toISOString(),
          amount,
          reason_code: reason,
          due: new Date(now.getTime() + DISPUTE_RESPONSE_DAYS * 86_400_000).toISOString(),
          outcome: null,
          decided: null,
        }
        await trx.insertInto('payments_disputes').values(dispute).execute()
        const noEffect = { converted: 0, feeFlat: 0, feeRate: 0, balance: 0 }
        await insertTrail(
          trx,
          ctx.database.dialect,
          trailRow(ctx.ids, row.id, 'dispute', dispute.created, amount, noEffect, null, null, { id: dispute.id, outcome: null }),
        )
        await writeCounters(trx, ctx.database.dialect, { ...row, disputed_amount: row.disputed_amount + amount })
        return toDispute(dispute)
      })
    },

    /**
     * Decides a dispute once. Won: a trail entry, nothing else. Lost: the amount goes back to the
     * cardholder and the merchant pays the dispute fee — one ledger line (balance −(amount
     * converted + fee)), a trail entry with its lineId, and the amount no longer refundable.
     */
    async decide(disputeId: string, outcome: 'won' | 'lost'): Promise<DisputeDto> {
      return inTransaction(ctx, async (trx) => {
        const found = await trx.selectFrom('payments_disputes').select('transaction_id').where('id', '=', disputeId).executeTakeFirst()
        if (!found) throw notFound('Dispute')
        // Lock the transaction first (the order every money movement takes), then re-read the dispute.
        const row = await findTransactionForUpdate(trx, ctx.database.dialect, found.transaction_id)
        const dispute = await trx.selectFrom('payments_disputes').selectAll().where('id', '=', disputeId).executeTakeFirst()
        if (!row || !dispute) throw notFound('Dispute')
        if (dispute.outcome !== null) throw conflict(`The dispute was already decided (${dispute.outcome})`)
        const created = ctx.clock.now().toISOString()
        let effect = { converted: 0, feeFlat: 0, feeRate: 0, balance: 0 }
        let lineId: string | null = null
        if (outcome === 'lost') {
          const merchant = await findMerchant(trx, row.merchant_id)
          if (!merchant) throw notFound('Merchant')
          effect = disputeLossEffect({ fx: ctx.fx, markupPpm: ctx.config.fxMarkupPpm }, merchant, dispute.amount, row.currency)
          lineId = await postLine(trx, ctx.database.dialect, ctx.ids, {
            merchant,
            kind: 'dispute',
            effect,
            created,
            transactionId: row.id,
            amount: { currency: row.currency, amount: dispute.amount },
            description: `Dispute ${dispute.id} lost`,
          })
          await writeCounters(trx, ctx.database.dialect, { ...row, lost_amount: row.lost_amount + dispute.amount })
        }
        await insertTrail(
          trx,
          ctx.database.dialect,
          trailRow(ctx.ids, row.id, 'dispute', created, dispute.amount, effect, null, lineId, { id: dispute.id, outcome }),
        )
        await trx.updateTable('payments_disputes').set({ outcome, decided: created }).where('id', '=', disputeId).execute()
        return toDispute({ ...dispute, outcome, decided: created })
      })
    },

    /** A fraud alert from the card network (in test mode: the operator's CLI). */
    async reportFraud(transactionId: string, reason: number | undefined): Promise<FraudDto> {
      if (reason !== undefined && !(reason in FRAUD_REASONS)) throw fieldError('reason', 'must be 0 to 8')
      const row = await findTransaction(db, transactionId)
      if (!row) throw notFound('Transaction')
      const now = ctx.clock.now().toISOString()
      const fraud: FraudsTable = {
        id: ctx.ids.timeOrdered(),
        merchant_id: row.merchant_id,
        transaction_id: row.id,
        created: now,
        reported: now,
        reason: reason ?? null,
      }
      await db.insertInto('payments_frauds').values(fraud).execute()
      return toFraud(fraud)
    },
  }
}

export type DisputesService = ReturnType<typeof createDisputesService>
