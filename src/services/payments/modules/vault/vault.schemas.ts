import { type Static, Type } from '@sinclair/typebox'

export const TokenizeBody = Type.Object(
  {
    type: Type.Union([Type.Literal('pcn'), Type.Literal('pcsc')], { description: '`pcn` a payment card number, `pcsc` a security code' }),
    value: Type.String({ minLength: 1, maxLength: 64, description: 'digits (spaces and dashes are ignored)' }),
  },
  { additionalProperties: true },
)
export type TokenizeBody = Static<typeof TokenizeBody>

export const TokenResponse = Type.Object(
  { token: Type.String({ description: 'opaque, short-lived and single-use; pass the whole response object on' }) },
  { description: 'A vault token' },
)
