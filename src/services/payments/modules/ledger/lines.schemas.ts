import { type Static, Type } from '@sinclair/typebox'
import { identifierSchema } from '../../../../core/http/identifiers.ts'

export const LineSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  test: Type.Boolean(),
  created: Type.String({ format: 'date-time' }),
  balance: Type.Integer({ description: 'final signed effect on the balance, minor units of the merchant currency' }),
  fee: Type.Integer({ description: 'fees included in the balance effect, minor units' }),
  description: Type.Optional(Type.String()),
  transactionId: Type.Optional(Type.String()),
  amount: Type.Optional(Type.Object({ currency: Type.String(), amount: Type.Integer() }, { description: 'the movement in the transaction currency' })),
  capture: Type.Optional(Type.Boolean()),
  refund: Type.Optional(Type.Boolean()),
  dispute: Type.Optional(Type.Boolean()),
})
export type LineDto = Static<typeof LineSchema>

export const LineResponse = Type.Object({ line: LineSchema })
export const LineParams = Type.Object({ lineId: identifierSchema() })
export const MerchantParams = Type.Object({ merchantId: identifierSchema() })
