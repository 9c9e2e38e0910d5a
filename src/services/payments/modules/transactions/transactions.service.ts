import type { Clock } from '../../../../core/clock.ts'
import { normalizeError } from '../../../../core/errors/normalize.ts'
import type { Movement, PaymentsMetrics } from '../../metrics.ts'
import { isRetryableConflict } from '../../../../core/db/errors.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import { createRowQueue } from '../../../../core/db/row-queue.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import { writeBatch } from '../../../../core/db/write-batch.ts'
import type { PageRequest } from '../../../../core/http/pagination.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { currencyExponent, formatMinor } from '../../../../core/money.ts'
import { type Actor, actorColumns, actorField } from '../../actor.ts'
import type { PaymentsContext } from '../../context.ts'
import {
  fieldError,
  fieldErrors,
  type ProcessingErrorBody,
  type ProcessingErrorCode,
  processingError,
  processingErrorBody,
} from '../../http/errors.ts'
import type { ProcessorCard } from '../../processors/card-processor.port.ts'
import type { Kysely, Transaction } from 'kysely'
import type { EventSink } from '../../events/event-sink.port.ts'
import type { CardsTable, MerchantRow, PaymentsTables, TrailKind, TrailRow, TransactionRow } from '../../tables.ts'
import { hasRate } from '../../money/fx.ts'
import type { BalanceEffect } from '../../money/balance-effect.ts'
import { NO_EFFECT } from '../../money/balance-effect.ts'
import { postLine } from '../ledger/index.ts'
import type { MerchantsService } from '../merchants/index.ts'
import { captureEffect, type LedgerRules, pendingOf, refundableOf, refundEffect } from './money-rules.ts'
import { transactionErrors } from './transactions.errors.ts'
import * as repo from './transactions.repository.ts'
import type { VolumePeriod } from './transaction-filters.ts'
import type { CaptureInput, CardDto, CreateTransactionInput, RefundInput, TrailEntry, TransactionDto, VoidInput, VolumeDto, VolumeTotals } from './transactions.schemas.ts'

// The amount rules and the balance effects of every movement are in money-rules.ts. Every check
// and every write of one operation happen in one database transaction, with the transaction's
// row locked on PostgreSQL (SQLite serialises writers), so two racing captures can never exceed
// the amount.

/** Built by assignment, not spreads: a capture answers the whole trail, entry by entry. */
function toTrailEntry(row: TrailRow): TrailEntry {
  const entry: TrailEntry = { created: row.created, amount: row.amount, balance: row.balance, fee: { flat: row.fee_flat, rate: row.fee_rate } }
  if (row.kind === 'dispute') {
    const dispute: NonNullable<TrailEntry['dispute']> = { id: row.dispute_id ?? '' }
    if (row.dispute_outcome === 'won') dispute.won = true
    else if (row.dispute_outcome === 'lost') dispute.lost = true
    entry.dispute = dispute
  } else entry[row.kind] = true
  if (row.descriptor !== null) entry.descriptor = row.descriptor
  if (row.line_id !== null) entry.lineId = row.line_id
  return { ...entry, ...actorField(row) }
}

function toTransaction(row: TransactionRow, trail: TrailRow[]): TransactionDto {
  const hasCard = row.card_bin !== null && row.card_last4 !== null && row.card_expiry !== null && row.card_scheme !== null
  return {
    id: row.id,
    merchantId: row.merchant_id,
    test: row.test === 1,
    created: row.created,
    currency: row.currency,
    amount: row.amount,
    descriptor: row.descriptor,
    pendingAmount: pendingOf(row),
    capturedAmount: row.captured_amount,
    refundedAmount: row.refunded_amount,
    voidedAmount: row.voided_amount,
    disputedAmount: row.disputed_amount,
    ...(hasCard
      ? {
          card: {
            bin: row.card_bin ?? '',
            last4: row.card_last4 ?? '',
            expiry: row.card_expiry ?? '',
            scheme: row.card_scheme ?? '',
            code: { present: row.card_code_present === 1 },
          },
        }
      : {}),
    ...(row.custom === null ? {} : { custom: JSON.parse(row.custom) as unknown }),
    ...(row.tds === null ? {} : { tds: row.tds }),
    recurring: row.recurring === 1,
    successful: row.successful === 1,
    error: row.error === null ? false : (JSON.parse(row.error) as ProcessingErrorBody),
    trail: trail.map(toTrailEntry),
  }
}

function toCard(row: CardsTable): CardDto {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    created: row.created,
    bin: row.bin ?? '',
    last4: row.last4 ?? '',
    expiry: row.expiry ?? '',
    scheme: row.scheme ?? '',
    ...(row.notes === null ? {} : { notes: row.notes }),
  }
}

/** A card's expiry as the API prints it: the last millisecond of the month, UTC. */
export function cardExpiry(year: number, month: number): string {
  return new Date(Date.UTC(year, month, 1) - 1).toISOString()
}

/** What a new transaction is made of; `recordTransaction` is the one place that stores one. */
export interface NewTransaction {
  merchant: Pick<MerchantRow, 'id' | 'test' | 'descriptor'>
  amount: number
  currency: string
  /** Falls back to the merchant's descriptor when absent or empty. */
  descriptor?: string | null
  card: ProcessorCard & { codePresent: boolean }
  custom?: unknown
  /** The customer-facing text of a payment (client payment API). */
  text?: string | null
  tds?: 'attempt' | 'full' | null
  recurring: boolean
  /** Undefined for an approved authorization; a processing error for a declined one. */
  error?: ProcessingErrorBody
  sourceTransactionId?: string | null
}

/**
 * Stores a transaction: an approved authorization (`successful`, the whole amount pending) or a
 * declined one (`error` set). The customer-side payment API calls this once the acquirer has
 * answered; recurring charges call it too. Pass an open database transaction as `db` to make it
 * part of a larger unit of work.
 */
export async function recordTransaction(
  deps: { db: Kysely<PaymentsTables>; database: Pick<Database, 'dialect'>; ids: IdGenerator; clock: Clock; events: EventSink; metrics?: PaymentsMetrics },
  input: NewTransaction,
): Promise<TransactionRow> {
  const row: TransactionRow = {
    id: deps.ids.timeOrdered(),
    merchant_id: input.merchant.id,
    test: input.merchant.test,
    created: deps.clock.now().toISOString(),
    currency: input.currency,
    amount: input.amount,
    descriptor: input.descriptor || input.merchant.descriptor,
    captured_amount: 0,
    refunded_amount: 0,
    voided_amount: 0,
    disputed_amount: 0,
    lost_amount: 0,
    card_bin: input.card.bin,
    card_last4: input.card.last4,
    card_expiry: input.card.expiry,
    card_scheme: input.card.scheme,
    card_code_present: input.card.codePresent ? 1 : 0,
    card_ref: input.card.ref,
    custom: input.custom === undefined ? null : JSON.stringify(input.custom),
    text: input.text ?? null,
    tds: input.tds ?? null,
    recurring: input.recurring ? 1 : 0,
    successful: input.error ? 0 : 1,
    error: input.error ? JSON.stringify(input.error) : null,
    source_transaction_id: input.sourceTransactionId ?? null,
  }
  // The row and its events commit together (the outbox): a webhook reports only what was stored.
  await withTransaction({ db: deps.db, dialect: deps.database.dialect }, async (trx) => {
    await repo.insertTransaction(trx, deps.database.dialect, row)
    const data = toTransaction(row, [])
    const event = { merchantId: row.merchant_id, subjectId: row.id, data }
    await deps.events.record(trx, { ...event, type: input.error ? 'transaction.declined' : 'transaction.authorized' })
    if (input.error && input.recurring) await deps.events.record(trx, { ...event, type: 'recurring.charge_failed' })
  })
  deps.metrics?.authorization(input.recurring ? 'recurring' : 'client', input.error ? 'declined' : 'approved')
  return row
}

/**
 * Every trail entry moves a counter (a won dispute follows an opened one), so an untouched
 * authorization has an empty trail: no need to ask.
 */
function untouched(row: TransactionRow): boolean {
  return row.captured_amount === 0 && row.refunded_amount === 0 && row.voided_amount === 0 && row.disputed_amount === 0
}

/** The trail with a new entry in its place: oldest first, by creation time then id, as the database orders it. */
function withEntry(trail: TrailRow[], entry: TrailRow): TrailRow[] {
  const last = trail.at(-1)
  if (!last || last.created < entry.created || (last.created === entry.created && last.id < entry.id)) return [...trail, entry]
  return [...trail, entry].sort((a, b) => (a.created === b.created ? (a.id < b.id ? -1 : 1) : a.created < b.created ? -1 : 1))
}

/** Runs a money movement in one database transaction; a conflict that outlived the retries is a 409. */
export async function inTransaction<T>(ctx: PaymentsContext, work: (trx: Transaction<PaymentsTables>) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(ctx.database, work)
  } catch (error) {
    if (isRetryableConflict(error)) throw transactionErrors.changedConcurrently()
    throw error
  }
}


const MOVEMENT_EVENTS = { capture: 'transaction.captured', refund: 'transaction.refunded', void: 'transaction.voided' } as const

/** What a merchant-initiated charge needs of the card vault (modules/vault). */
export interface StoredCards {
  /** Whether live merchants may take payments: the vault key was supplied from outside. */
  liveReady(): boolean
  storedCard(ref: string): Promise<{ kept: false } | { kept: true; number: string | undefined }>
}

const LIVE_VAULT_MISSING = 'Live payments are disabled until the card vault key is supplied from outside Triad (PAYMENTS_VAULT_KEY, or TRIAD_SECRETS_FILE)'
const CARD_UNREADABLE = 'The stored card can no longer be read (its vault key is not available); ask the cardholder to pay again'

export function createTransactionsService(ctx: PaymentsContext, merchants: MerchantsService, cards?: StoredCards) {
  const db = ctx.db
  const rules: LedgerRules = { fx: ctx.fx, markupPpm: ctx.config.fxMarkupPpm }

  const dialect = ctx.database.dialect
  // SQLite has no pool to starve, and its group commit batches captures that arrive together.
  const oneAtATime = dialect === 'postgres' ? createRowQueue() : <T>(_key: string, work: () => Promise<T>) => work()
  const readTransaction = repo.createTransactionReader(ctx.database, { clock: ctx.clock, maxLagMs: ctx.config.readCacheMaxLagMs }, toTransaction)

  /** The transaction row, after the access check: unknown → 404, another merchant's → 403. */
  async function requireTransaction(appId: string, transactionId: string): Promise<TransactionRow> {
    const found = await repo.findTransactionForApp(db, dialect, transactionId, appId)
    if (!found) throw transactionErrors.notFound()
    if (!found.member) throw transactionErrors.notAMember()
    return found.row
  }

  /**
   * Captures, refunds and voids: lock the row (reading the merchant's pricing and the caller's
   * membership with it), check the amount rule, read the trail so far, then post the ledger line
   * (captures and refunds), append the trail entry, write the counters and record the event —
   * all in one database transaction, the writes sent together.
   */
  async function move(
    actor: Actor,
    transactionId: string,
    kind: Movement,
    input: { amount: number; currency?: string; descriptor?: string },
  ): Promise<TransactionDto> {
    try {
      const moved = await oneAtATime(transactionId, () => moveInTransaction(actor, transactionId, kind, input))
      ctx.metrics.movement(kind, 'ok')
      return moved
    } catch (error) {
      ctx.metrics.movement(kind, normalizeError(error).code)
      throw error
    }
  }

  /** `actor.id` is the member whose access is checked (an app, or a merchant user); the trail entry and the event name the actor. */
  async function moveInTransaction(
    actor: Actor,
    transactionId: string,
    kind: Movement,
    input: { amount: number; currency?: string; descriptor?: string },
  ): Promise<TransactionDto> {
    return inTransaction(ctx, async (trx) => {
      const found = await repo.findTransactionForMove(trx, dialect, transactionId, actor.id)
      if (!found) throw transactionErrors.notFound()
      if (!found.member) throw transactionErrors.notAMember()
      const { row, merchant } = found
      if (row.successful !== 1) throw fieldError('amount', 'The transaction was not successful; nothing can be captured, refunded or voided')
      if (input.currency !== undefined && input.currency !== row.currency)
        throw fieldError('currency', `must be ${row.currency}, the currency of the transaction`)
      const limit = kind === 'refund' ? refundableOf(row) : pendingOf(row)
      if (input.amount > limit) throw fieldError('amount', `Can ${kind} at most ${formatMinor(limit, row.currency)}`)
      const created = ctx.clock.now().toISOString()
      const descriptor = kind === 'void' ? null : input.descriptor || row.descriptor
      // Read before writing: the trail so far (the answer and the event carry the whole trail).
      const trail = untouched(row) ? [] : await repo.trailOf(trx, dialect, row.id)
      // The writes go out together (one statement on PostgreSQL, core/db/write-batch.ts).
      const writes = writeBatch(trx, dialect)
      let effect: BalanceEffect = NO_EFFECT
      let lineId: string | null = null
      if (kind !== 'void') {
        if (!hasRate(ctx.fx, row.currency)) throw processingError(1)
        effect = kind === 'capture' ? captureEffect(rules, merchant, input.amount, row.currency) : refundEffect(rules, merchant, input.amount, row.currency)
        lineId = await postLine(writes, dialect, ctx.ids, {
          merchant,
          kind,
          effect,
          created,
          transactionId: row.id,
          amount: { currency: row.currency, amount: input.amount },
        })
      }
      const entry = { ...trailRow(ctx.ids, row.id, kind, created, input.amount, effect, descriptor, lineId), ...actorColumns(actor) }
      await repo.insertTrail(writes, dialect, entry)
      const updated = { ...row }
      if (kind === 'capture') updated.captured_amount += input.amount
      else if (kind === 'refund') updated.refunded_amount += input.amount
      else updated.voided_amount += input.amount
      await repo.writeCounters(writes, dialect, updated)
      const transaction = toTransaction(updated, withEntry(trail, entry))
      await ctx.events.record(writes, { type: MOVEMENT_EVENTS[kind], merchantId: row.merchant_id, subjectId: row.id, data: transaction, actor })
      await writes.flush()
      return transaction
    })
  }

  return {
    requireTransaction,

    async get(appId: string, transactionId: string): Promise<TransactionDto> {
      const found = await readTransaction(transactionId, appId)
      if (!found) throw transactionErrors.notFound()
      if (!found.member) throw transactionErrors.notAMember()
      return found.value
    },

    async listOfMerchant(appId: string, merchantId: string, page: PageRequest, filter: repo.TransactionFilter = {}): Promise<TransactionDto[]> {
      await merchants.requireMerchant(appId, merchantId)
      const { rows, trails } = await repo.transactionPageOfMerchant(ctx.database, merchantId, page, filter)
      return rows.map((row) => toTransaction(row, trails.get(row.id) ?? []))
    },

    /** A merchant's volume per currency and UTC day over a period (dense: every day of it), with its totals and today's. */
    async volume(appId: string, merchantId: string, period: VolumePeriod): Promise<VolumeDto> {
      await merchants.requireMerchant(appId, merchantId)
      const dayAfter = new Date(Date.parse(`${period.to}T00:00:00.000Z`) + 86_400_000).toISOString()
      const rows = await repo.volumeOfMerchant(ctx.database, merchantId, `${period.from}T00:00:00.000Z`, dayAfter)
      const days: string[] = []
      for (let at = Date.parse(`${period.from}T00:00:00.000Z`); at < Date.parse(dayAfter); at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10))
      const zero = (): VolumeTotals => ({ count: 0, authorized: 0, captured: 0, refunded: 0 })
      const add = (into: VolumeTotals, from: VolumeTotals) => {
        into.count += from.count
        into.authorized += from.authorized
        into.captured += from.captured
        into.refunded += from.refunded
      }
      const currencies = [...new Set(rows.map((row) => row.currency))].sort().map((currency) => {
        const byDay = new Map(rows.filter((row) => row.currency === currency).map((row) => [row.day, row]))
        const total = zero()
        const today = zero()
        const series = days.map((date) => {
          const totals = zero()
          const row = byDay.get(date)
          if (row) add(totals, row)
          add(total, totals)
          if (date === period.today) add(today, totals)
          return { date, ...totals }
        })
        return { currency, exponent: currencyExponent(currency) ?? 2, ...total, today, days: series }
      })
      return { from: period.from, to: period.to, today: period.today, currencies }
    },

    capture: (actor: Actor, transactionId: string, input: CaptureInput) => move(actor, transactionId, 'capture', input),
    refund: (actor: Actor, transactionId: string, input: RefundInput) => move(actor, transactionId, 'refund', input),
    void: (actor: Actor, transactionId: string, input: VoidInput) => move(actor, transactionId, 'void', input),

    /**
     * A merchant-initiated charge on the card of an earlier transaction (or of a saved card).
     * The acquirer is called outside any database transaction; the result — approved or
     * declined — is stored, and a decline answers 400 with its processing error.
     */
    async createRecurring(appId: string, merchantId: string, input: CreateTransactionInput): Promise<{ id: string }> {
      const merchant = await merchants.requireMerchant(appId, merchantId)
      const sourceId = input.transactionId ?? input.authorizationId
      const cardId = typeof input.cardId === 'string' && input.cardId !== '' ? input.cardId : undefined
      if (sourceId === undefined && cardId === undefined) {
        throw fieldErrors([{ field: 'transactionId', message: 'is required (or authorizationId, or the deprecated cardId)' }])
      }
      let card: NewTransaction['card']
      let source: string | null
      if (sourceId !== undefined) {
        const base = await repo.findTransaction(db, sourceId)
        if (!base || base.merchant_id !== merchantId) throw fieldError('transactionId', 'no such transaction on this merchant')
        if (base.successful !== 1) throw fieldError('transactionId', 'is not a successful transaction')
        card = { ref: base.card_ref, bin: base.card_bin, last4: base.card_last4, expiry: base.card_expiry, scheme: base.card_scheme, codePresent: false }
        source = base.id
      } else {
        const saved = cardId === undefined ? undefined : await repo.findCard(db, cardId)
        if (!saved || saved.merchant_id !== merchantId) throw fieldError('cardId', 'no such card on this merchant')
        card = { ref: saved.card_ref, bin: saved.bin, last4: saved.last4, expiry: saved.expiry, scheme: saved.scheme, codePresent: false }
        source = saved.transaction_id
      }
      if (currencyExponent(input.currency) === undefined) throw fieldError('currency', 'must be a three-letter ISO 4217 currency code')
      if (!hasRate(ctx.fx, input.currency)) throw processingError(1)
      if (merchant.test !== 1 && cards && !cards.liveReady()) throw processingError(27, declineBody(27, LIVE_VAULT_MISSING))
      // The acquirer is sent the number kept in the vault: a card no key opens cannot be charged.
      const stored = card.ref === null || !cards ? undefined : await cards.storedCard(card.ref)
      if (stored?.kept && stored.number === undefined) throw processingError(2, declineBody(2, CARD_UNREADABLE))
      const descriptor = input.descriptor || merchant.descriptor
      const result = await ctx.processor.authorize({
        merchant: { id: merchant.id, test: merchant.test === 1, descriptor: merchant.descriptor },
        card,
        amount: input.amount,
        currency: input.currency,
        descriptor,
        recurring: true,
      })
      const error = result.approved ? undefined : declineBody(result.code, result.message)
      const row = await recordTransaction(ctx, {
        merchant,
        amount: input.amount,
        currency: input.currency,
        descriptor,
        card,
        custom: input.custom,
        recurring: true,
        error,
        sourceTransactionId: source,
      })
      if (error) throw processingError(error.code as ProcessingErrorCode, error)
      return { id: row.id }
    },

    async saveCard(appId: string, merchantId: string, input: { transactionId: string; notes?: string }): Promise<{ id: string }> {
      await merchants.requireMerchant(appId, merchantId)
      const base = await repo.findTransaction(db, input.transactionId)
      if (!base || base.merchant_id !== merchantId) throw fieldError('transactionId', 'no such transaction on this merchant')
      if (base.successful !== 1 || base.card_last4 === null) throw fieldError('transactionId', 'is not a successful card transaction')
      const row: CardsTable = {
        id: ctx.ids.timeOrdered(),
        merchant_id: merchantId,
        transaction_id: base.id,
        created: ctx.clock.now().toISOString(),
        bin: base.card_bin,
        last4: base.card_last4,
        expiry: base.card_expiry,
        scheme: base.card_scheme,
        card_ref: base.card_ref,
        notes: input.notes ?? null,
      }
      await repo.insertCard(db, row)
      return { id: row.id }
    },

    async getCard(appId: string, cardId: string): Promise<CardDto> {
      const row = await repo.findCard(db, cardId)
      if (!row) throw transactionErrors.cardNotFound()
      await merchants.requireMerchant(appId, row.merchant_id)
      return toCard(row)
    },
  }
}

function declineBody(code: ProcessingErrorCode, message: string | undefined): ProcessingErrorBody {
  const body = processingErrorBody(code)
  return message === undefined ? body : { ...body, message }
}

export function trailRow(
  ids: IdGenerator,
  transactionId: string,
  kind: TrailKind,
  created: string,
  amount: number,
  effect: BalanceEffect,
  descriptor: string | null,
  lineId: string | null,
  dispute?: { id: string; outcome: 'won' | 'lost' | null },
): TrailRow {
  return {
    id: ids.timeOrdered(),
    transaction_id: transactionId,
    kind,
    created,
    amount,
    balance: effect.balance,
    fee_flat: effect.feeFlat,
    fee_rate: effect.feeRate,
    descriptor,
    line_id: lineId,
    dispute_id: dispute?.id ?? null,
    dispute_outcome: dispute?.outcome ?? null,
    ...actorColumns(undefined),
  }
}

export type TransactionsService = ReturnType<typeof createTransactionsService>
