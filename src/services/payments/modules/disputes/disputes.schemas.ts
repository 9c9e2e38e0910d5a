import { type Static, Type } from '@sinclair/typebox'
import { identifierSchema } from '../../../../core/http/identifiers.ts'
import { PageQuery } from '../../http/route-kit.ts'

/**
 * Dispute reasons. Paylike does not publish its list; these follow the card networks' dispute
 * categories, numbered for the API.
 */
export const DISPUTE_REASONS = {
  1: 'Fraud: the cardholder did not authorise the payment',
  2: 'Authorisation: the payment lacked a valid authorisation',
  3: 'Processing error: duplicate, late or incorrect processing',
  4: 'Goods or services not received',
  5: 'Goods or services not as described',
  6: 'Credit not processed: a promised refund was not made',
  7: 'Cancelled recurring payment',
} as const
export type DisputeReasonCode = keyof typeof DISPUTE_REASONS

/** Fraud alert reasons (the spec's list). */
export const FRAUD_REASONS = {
  0: 'Misc',
  1: 'Fraudulent usage',
  2: 'Fraudulent application',
  3: 'Counterfeit',
  4: 'Account takeover',
  5: 'Card not delivered',
  6: 'Card stolen',
  7: 'Card lost',
  8: 'Cardholder manipulated',
} as const

export const DisputeSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  transactionId: Type.String(),
  created: Type.String({ format: 'date-time' }),
  amount: Type.Integer({ description: 'minor units of the transaction currency' }),
  reason: Type.Object({ code: Type.Integer(), title: Type.String() }),
  due: Type.String({ format: 'date-time', description: "when the merchant's response is due" }),
  won: Type.Optional(Type.Boolean({ description: 'present once decided' })),
  lost: Type.Optional(Type.Boolean({ description: 'present once decided' })),
})
export type DisputeDto = Static<typeof DisputeSchema>

export const FraudSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  transactionId: Type.String(),
  created: Type.String({ format: 'date-time' }),
  reported: Type.Optional(Type.String({ format: 'date-time' })),
  reason: Type.Optional(Type.Integer({ minimum: 0, maximum: 8 })),
})
export type FraudDto = Static<typeof FraudSchema>

/** `filter[merchantId]` is required (checked in the handler so the 400 names it as sent). */
export const FilteredPageQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    'filter[merchantId]': Type.Optional(identifierSchema()),
    'filter[transactionId]': Type.Optional(identifierSchema()),
  }),
])

export const DisputeParams = Type.Object({ disputeId: identifierSchema() })
export const FraudParams = Type.Object({ fraudId: identifierSchema() })
export const DisputeResponse = Type.Object({ dispute: DisputeSchema })
export const FraudResponse = Type.Object({ fraud: FraudSchema })
