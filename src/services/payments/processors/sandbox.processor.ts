import type { Clock } from '../../../core/clock.ts'
import type { DialectName } from '../../../core/db/create-db.ts'
import type { FxTable } from '../money/fx.ts'
import { convert, hasRate } from '../money/fx.ts'
import type { PaymentsDb, SandboxCardsTable } from '../tables.ts'
import type { AuthorizeRequest, AuthorizeResult, CardProcessor } from './card-processor.port.ts'
import { drawFromBalance, findCardState, upsertCardState } from './sandbox.repository.ts'

/** What a sandbox card's status means for a charge (codes of paylike/processing-errors). */
const DECLINE_BY_STATUS = { invalid: 10, expired: 6, disabled: 9, lost: 10 } as const

/**
 * The test-mode acquirer. Test merchants only: a live merchant gets a clear error, because no
 * real acquirer is configured. A card's state (status, balance, limit; see
 * `payments_sandbox_cards`, set when the card is first used in test mode) carries over to later
 * charges, so a recurring decline (expired, insufficient funds) can be produced on purpose; an
 * approved charge draws the amount from the card's balance.
 */
export function createSandboxProcessor(deps: { db: PaymentsDb; dialect: DialectName; clock: Clock; fx: FxTable }): CardProcessor & {
  setCardState(ref: string, state: Partial<Omit<SandboxCardsTable, 'card_ref' | 'updated'>>): Promise<void>
} {
  const inCurrency = (amount: number, from: string, to: string) =>
    from === to || (hasRate(deps.fx, from) && hasRate(deps.fx, to)) ? convert(deps.fx, amount, from, to, { markupPpm: 0, direction: 'debit' }) : undefined

  return {
    async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
      if (!request.merchant.test) return { approved: false, code: 12, message: 'No card acquirer is configured for live merchants' }
      const now = deps.clock.now()
      if (request.card.expiry !== null && new Date(request.card.expiry).getTime() < now.getTime()) return { approved: false, code: 6 }
      if (request.card.ref === null) return { approved: true }
      const ref = request.card.ref
      // The read, the checks and the draw on the balance are one conditional update, so two
      // charges at once cannot both spend the same balance.
      const state = await findCardState(deps.db, deps.dialect, ref)
      if (!state) return { approved: true }
      if (state.status !== 'valid') return { approved: false, code: DECLINE_BY_STATUS[state.status] }
      if (state.limit_currency !== null && state.limit_amount !== null) {
        const amount = inCurrency(request.amount, request.currency, state.limit_currency)
        if (amount === undefined || amount > state.limit_amount) return { approved: false, code: 25 }
      }
      if (state.balance_currency !== null && state.balance !== null) {
        const amount = inCurrency(request.amount, request.currency, state.balance_currency)
        if (amount === undefined) return { approved: false, code: 7 }
        if (!(await drawFromBalance(deps.db, ref, amount, now.toISOString()))) return { approved: false, code: 7 }
      }
      return { approved: true }
    },

    async setCardState(ref, state) {
      const row: SandboxCardsTable = {
        card_ref: ref,
        status: state.status ?? 'valid',
        balance_currency: state.balance_currency ?? null,
        balance: state.balance ?? null,
        limit_currency: state.limit_currency ?? null,
        limit_amount: state.limit_amount ?? null,
        updated: deps.clock.now().toISOString(),
      }
      await upsertCardState(deps.db, row)
    },
  }
}
