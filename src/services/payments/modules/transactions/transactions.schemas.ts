import { type Static, Type } from '@sinclair/typebox'
import { identifierSchema } from '../../../../core/http/identifiers.ts'
import { ActorSchema } from '../../http/actor.schema.ts'
import { ProcessingErrorSchema } from '../../http/errors.ts'
import { DESCRIPTOR_PATTERN } from '../merchants/index.ts'

const Amount = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'minor units of the currency (995 is 9.95)' })
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'three-letter ISO 4217 code' })
/** An empty descriptor counts as absent (clients send `descriptor: ""`). */
const Descriptor = Type.String({
  pattern: DESCRIPTOR_PATTERN,
  description: 'text on the bank statement (printable ASCII, at most 22 characters); empty falls back',
})

const Fee = Type.Object({
  flat: Type.Integer({ description: 'flat fee, minor units of the merchant currency' }),
  rate: Type.Integer({ description: 'rate fee, minor units of the merchant currency' }),
})

const TrailEntrySchema = Type.Object({
  capture: Type.Optional(Type.Boolean()),
  refund: Type.Optional(Type.Boolean()),
  void: Type.Optional(Type.Boolean()),
  dispute: Type.Optional(Type.Object({ id: Type.String(), won: Type.Optional(Type.Boolean()), lost: Type.Optional(Type.Boolean()) })),
  created: Type.String({ format: 'date-time' }),
  amount: Type.Integer({ description: 'minor units of the transaction currency' }),
  balance: Type.Integer({ description: 'signed effect on the merchant balance, minor units of the merchant currency, after conversion and fees' }),
  fee: Fee,
  descriptor: Type.Optional(Type.String()),
  lineId: Type.Optional(Type.String()),
  actor: Type.Optional(ActorSchema),
})
export type TrailEntry = Static<typeof TrailEntrySchema>

const TransactionCardSchema = Type.Object({
  bin: Type.String(),
  last4: Type.String(),
  expiry: Type.String({ format: 'date-time', description: 'last millisecond of the expiry month' }),
  scheme: Type.String(),
  code: Type.Object({ present: Type.Boolean() }),
})

export const TransactionSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  test: Type.Boolean(),
  created: Type.String({ format: 'date-time' }),
  currency: Type.String(),
  amount: Type.Integer(),
  descriptor: Type.String(),
  pendingAmount: Type.Integer({ description: 'amount − captured − voided: available to capture or void' }),
  capturedAmount: Type.Integer({ description: 'refunds do not lower it' }),
  refundedAmount: Type.Integer(),
  voidedAmount: Type.Integer(),
  disputedAmount: Type.Integer(),
  card: Type.Optional(TransactionCardSchema),
  custom: Type.Optional(Type.Unknown()),
  tds: Type.Optional(Type.String()),
  recurring: Type.Boolean(),
  successful: Type.Boolean(),
  error: Type.Union([Type.Literal(false), ProcessingErrorSchema]),
  trail: Type.Array(TrailEntrySchema),
})
export type TransactionDto = Static<typeof TransactionSchema>

export const TransactionResponse = Type.Object({ transaction: TransactionSchema })
export const TransactionParams = Type.Object({ transactionId: identifierSchema() })

export const CaptureBody = Type.Object(
  {
    amount: Amount,
    currency: Type.Optional(Currency),
    descriptor: Type.Optional(Descriptor),
  },
  { additionalProperties: true },
)
export type CaptureInput = Static<typeof CaptureBody>

export const RefundBody = Type.Object({ amount: Amount, descriptor: Type.Optional(Descriptor) }, { additionalProperties: true })
export type RefundInput = Static<typeof RefundBody>

export const VoidBody = Type.Object({ amount: Amount }, { additionalProperties: true })
export type VoidInput = Static<typeof VoidBody>

export const CreateTransactionBody = Type.Object(
  {
    transactionId: Type.Optional(identifierSchema({ description: "the earlier transaction (the customer's first payment)" })),
    authorizationId: Type.Optional(identifierSchema({ description: 'alias of transactionId' })),
    cardId: Type.Optional(Type.Union([identifierSchema(), Type.Literal(false)], { description: 'a saved card (deprecated); false is ignored' })),
    descriptor: Type.Optional(Descriptor),
    currency: Currency,
    amount: Amount,
    custom: Type.Optional(Type.Unknown({ description: 'custom data, kept with the transaction' })),
  },
  { additionalProperties: true },
)
export type CreateTransactionInput = Static<typeof CreateTransactionBody>

export const CreatedTransactionResponse = Type.Object({ transaction: Type.Object({ id: Type.String() }) })

const CardSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  created: Type.String({ format: 'date-time' }),
  bin: Type.String(),
  last4: Type.String(),
  expiry: Type.String({ format: 'date-time' }),
  scheme: Type.String(),
  notes: Type.Optional(Type.String()),
})
export type CardDto = Static<typeof CardSchema>

export const CreateCardBody = Type.Object(
  { transactionId: identifierSchema(), notes: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: true },
)
export const CardResponse = Type.Object({ card: CardSchema })
export const CreatedCardResponse = Type.Object({ card: Type.Object({ id: Type.String() }) })
export const CardParams = Type.Object({ cardId: identifierSchema() })
export const MerchantParams = Type.Object({ merchantId: identifierSchema() })

const VolumeTotalsSchema = Type.Object({
  count: Type.Integer({ description: 'successful authorizations made' }),
  authorized: Type.Integer({ description: 'their amount, minor units' }),
  captured: Type.Integer({ description: 'captures made, minor units (of transactions of any date)' }),
  refunded: Type.Integer({ description: 'refunds made, minor units' }),
})
export type VolumeTotals = Static<typeof VolumeTotalsSchema>

const day = (description = 'a UTC day, YYYY-MM-DD') => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description })
const Day = day()

export const VolumeQuery = Type.Object(
  {
    from: Type.Optional(day('first day (UTC) of the period; default: 29 days before `to`')),
    to: Type.Optional(day('last day (UTC) of the period, included; default: today')),
  },
  { additionalProperties: true },
)

const VolumeSchema = Type.Object({
  from: Day,
  to: Day,
  today: day("the server's today (UTC)"),
  currencies: Type.Array(
    Type.Intersect([
      Type.Object({ currency: Type.String(), exponent: Type.Integer({ description: 'ISO 4217 minor unit digits' }) }),
      VolumeTotalsSchema,
      Type.Object({
        today: VolumeTotalsSchema,
        days: Type.Array(Type.Intersect([Type.Object({ date: Day }), VolumeTotalsSchema]), { description: 'every day of the period, oldest first' }),
      }),
    ]),
    { description: 'each currency with any movement in the period, by code' },
  ),
})
export type VolumeDto = Static<typeof VolumeSchema>
export const VolumeResponse = Type.Object({ volume: VolumeSchema })
