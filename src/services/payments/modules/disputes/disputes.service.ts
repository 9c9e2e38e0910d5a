import type { PageRequest } from '../../../../core/http/pagination.ts'
import { formatMinor } from '../../../../core/money.ts'
import { fieldError } from '../../http/errors.ts'
import type { PaymentsContext } from '../../context.ts'
import type { DisputesTable, FraudsTable, PaymentsDb } from '../../tables.ts'
import type { MerchantsService } from '../merchants/index.ts'
import type { DisputeMovements } from '../transactions/index.ts'
import type { EventSink } from '../../events/event-sink.port.ts'
import { disputeErrors } from './disputes.errors.ts'
import * as repo from './disputes.repository.ts'
import { DISPUTE_REASONS, type DisputeDto, type DisputeReasonCode, FRAUD_REASONS, type FraudDto } from './disputes.schemas.ts'

/** How long a merchant has to answer a dispute. */
const DISPUTE_RESPONSE_DAYS = 10

function toDispute(row: DisputesTable): DisputeDto {
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

function toFraud(row: FraudsTable): FraudDto {
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

export interface DisputesDeps {
  db: PaymentsDb
  clock: PaymentsContext['clock']
  ids: PaymentsContext['ids']
  merchants: MerchantsService
  /** The transactions module's port: every movement of money a dispute makes. */
  movements: DisputeMovements
  /** The outbox: dispute and fraud-alert events, recorded in the same database transaction. */
  events: EventSink
}

export function createDisputesService(deps: DisputesDeps) {
  const { db, merchants, movements } = deps
  const requireFilter = async (appId: string, filter: ListFilter): Promise<string> => {
    if (!filter.merchantId) throw fieldError('filter[merchantId]', 'is required')
    await merchants.requireMerchant(appId, filter.merchantId)
    return filter.merchantId
  }

  return {
    async listDisputes(appId: string, filter: ListFilter, page: PageRequest): Promise<DisputeDto[]> {
      const merchantId = await requireFilter(appId, filter)
      return (await repo.listDisputes(db, { merchantId, transactionId: filter.transactionId }, page)).map(toDispute)
    },

    async getDispute(appId: string, id: string): Promise<DisputeDto> {
      const row = await repo.findDispute(db, id)
      if (!row) throw disputeErrors.notFound()
      await merchants.requireMerchant(appId, row.merchant_id)
      return toDispute(row)
    },

    async listFrauds(appId: string, filter: ListFilter, page: PageRequest): Promise<FraudDto[]> {
      const merchantId = await requireFilter(appId, filter)
      return (await repo.listFrauds(db, { merchantId, transactionId: filter.transactionId }, page)).map(toFraud)
    },

    async getFraud(appId: string, id: string): Promise<FraudDto> {
      const row = await repo.findFraud(db, id)
      if (!row) throw disputeErrors.fraudNotFound()
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
      return movements.inTransaction(async (trx) => {
        const locked = await movements.lock(trx, transactionId)
        if (!locked) throw disputeErrors.transactionNotFound()
        const disputable = locked.disputable
        const amount = options.amount ?? disputable
        if (disputable <= 0) throw fieldError('amount', 'Nothing of this transaction is captured and undisputed')
        if (!Number.isSafeInteger(amount) || amount <= 0 || amount > disputable)
          throw fieldError('amount', `Can dispute at most ${formatMinor(disputable, locked.currency)}`)
        const now = deps.clock.now()
        const dispute: DisputesTable = {
          id: deps.ids.timeOrdered(),
          merchant_id: locked.merchantId,
          transaction_id: locked.id,
          created: now.toISOString(),
          amount,
          reason_code: reason,
          due: new Date(now.getTime() + DISPUTE_RESPONSE_DAYS * 86_400_000).toISOString(),
          outcome: null,
          decided: null,
        }
        await repo.insertDispute(trx, dispute)
        await movements.opened(trx, locked, dispute)
        const dto = toDispute(dispute)
        await deps.events.record(trx, { type: 'dispute.opened', merchantId: dispute.merchant_id, subjectId: dispute.transaction_id, data: dto })
        return dto
      })
    },

    /**
     * Decides a dispute once. Won: a trail entry, nothing else. Lost: the amount goes back to the
     * cardholder and the merchant pays the dispute fee — one ledger line (balance −(amount
     * converted + fee)), a trail entry with its lineId, and the amount no longer refundable.
     */
    async decide(disputeId: string, outcome: 'won' | 'lost'): Promise<DisputeDto> {
      return movements.inTransaction(async (trx) => {
        const transactionId = await repo.findDisputedTransactionId(trx, disputeId)
        if (transactionId === undefined) throw disputeErrors.notFound()
        // Lock the transaction first (the order every money movement takes), then re-read the dispute.
        const locked = await movements.lock(trx, transactionId)
        const dispute = await repo.findDispute(trx, disputeId)
        if (!locked || !dispute) throw disputeErrors.notFound()
        if (dispute.outcome !== null) throw disputeErrors.alreadyDecided(dispute.outcome)
        const created = deps.clock.now().toISOString()
        await movements.decided(trx, locked, dispute, outcome, created)
        await repo.setDisputeOutcome(trx, disputeId, outcome, created)
        const dto = toDispute({ ...dispute, outcome, decided: created })
        await deps.events.record(trx, { type: outcome === 'won' ? 'dispute.won' : 'dispute.lost', merchantId: dispute.merchant_id, subjectId: dispute.transaction_id, data: dto })
        return dto
      })
    },

    /** A fraud alert from the card network (in test mode: the operator's CLI). */
    async reportFraud(transactionId: string, reason: number | undefined): Promise<FraudDto> {
      if (reason !== undefined && !(reason in FRAUD_REASONS)) throw fieldError('reason', 'must be 0 to 8')
      // Under the transaction's lock, like every change of it: its events keep their order.
      return movements.inTransaction(async (trx) => {
        const row = await movements.lock(trx, transactionId)
        if (!row) throw disputeErrors.transactionNotFound()
        const now = deps.clock.now().toISOString()
        const fraud: FraudsTable = {
          id: deps.ids.timeOrdered(),
          merchant_id: row.merchantId,
          transaction_id: row.id,
          created: now,
          reported: now,
          reason: reason ?? null,
        }
        await repo.insertFraud(trx, fraud)
        const dto = toFraud(fraud)
        await deps.events.record(trx, { type: 'fraud_alert.raised', merchantId: fraud.merchant_id, subjectId: fraud.transaction_id, data: dto })
        return dto
      })
    },
  }
}

export type DisputesService = ReturnType<typeof createDisputesService>
