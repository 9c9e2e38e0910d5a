import { type Static, Type } from '@sinclair/typebox'

const Money = Type.Object(
  {
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 alpha code' }),
    exponent: Type.Integer({ minimum: 0, maximum: 12, description: 'decimal places in `value`' }),
    value: Type.Integer({ minimum: 0, description: 'the amount times 10^exponent' }),
  },
  { additionalProperties: false },
)

/** A vault response passed whole (`{token}`), or the bare token string. */
const TokenRef = Type.Union([Type.String({ minLength: 1, maxLength: 512 }), Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) })])

const TestCard = Type.Object(
  {
    scheme: Type.Optional(Type.Union([Type.Literal('supported'), Type.Literal('unsupported'), Type.Literal('unknown')])),
    code: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('invalid')])),
    status: Type.Optional(
      Type.Union([Type.Literal('valid'), Type.Literal('invalid'), Type.Literal('expired'), Type.Literal('disabled'), Type.Literal('lost')]),
    ),
    limit: Type.Optional(Money),
    balance: Type.Optional(Money),
  },
  { additionalProperties: false },
)

const TestScenario = Type.Object(
  {
    card: Type.Optional(TestCard),
    fingerprint: Type.Optional(Type.Union([Type.Literal('timeout'), Type.Literal('success')])),
    tds: Type.Optional(
      Type.Object(
        {
          fingerprint: Type.Optional(Type.Union([Type.Literal('timeout'), Type.Literal('unavailable'), Type.Literal('success')])),
          challenge: Type.Optional(
            Type.Boolean({ description: "false: the frictionless flow, once the hints hold the fingerprint frame's result for this payment (else a challenge)" }),
          ),
          status: Type.Optional(Type.Union([Type.Literal('authenticated'), Type.Literal('rejected'), Type.Literal('unavailable'), Type.Literal('attempted')])),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Required for test merchants (may be `{}`), absent for live ones; decides the sandbox outcome' },
)

export const PaymentBody = Type.Object(
  {
    integration: Type.Object({ key: Type.String({ minLength: 1, maxLength: 100, description: "the merchant's public key" }) }, { additionalProperties: true }),
    amount: Type.Optional(Money),
    text: Type.Optional(Type.String({ minLength: 2, maxLength: 1024, description: 'shown on the statement (first 22 characters)' })),
    card: Type.Object(
      {
        number: TokenRef,
        expiry: Type.Object(
          { month: Type.Integer({ minimum: 1, maximum: 12 }), year: Type.Integer({ minimum: 2000, maximum: 2099 }) },
          { additionalProperties: false },
        ),
        code: Type.Optional(TokenRef),
      },
      { additionalProperties: true },
    ),
    custom: Type.Optional(Type.Unknown()),
    plan: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
    unplanned: Type.Optional(
      Type.Object({ merchant: Type.Optional(Type.Boolean()), customer: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    ),
    test: Type.Optional(TestScenario),
    hints: Type.Optional(Type.Array(Type.String({ maxLength: 512 }), { maxItems: 50 })),
  },
  { additionalProperties: true },
)
export type PaymentBody = Static<typeof PaymentBody>
export type TestScenario = Static<typeof TestScenario>
export type MoneyInput = Static<typeof Money>

const Challenge = Type.Object({
  name: Type.String(),
  type: Type.Union([Type.Literal('fetch'), Type.Literal('background-iframe'), Type.Literal('iframe')]),
  path: Type.String(),
})

// One object with optional members rather than a union: the serializer of a union has to
// validate the value against each branch on every response.
export const PaymentResponse = Type.Object(
  {
    challenges: Type.Optional(Type.Array(Challenge)),
    authorizationId: Type.Optional(Type.String()),
    transactionId: Type.Optional(Type.String({ description: 'the same id, for older clients' })),
  },
  { description: 'Either `challenges` to complete, or the final `authorizationId`' },
)
export type PaymentResponse = Static<typeof PaymentResponse>

export const ChallengeResponse = Type.Object(
  {
    action: Type.Optional(Type.String({ description: 'the absolute URL the frame form posts to (frame challenges)' })),
    method: Type.Optional(Type.Literal('POST')),
    fields: Type.Optional(Type.Record(Type.String(), Type.String())),
    width: Type.Optional(Type.Integer()),
    height: Type.Optional(Type.Integer()),
    timeout: Type.Optional(Type.Integer({ description: 'milliseconds' })),
    hints: Type.Array(Type.String()),
  },
  { description: 'What completes a challenge: a frame to load (`action`, `fields`), or just new `hints`' },
)
export type ChallengeResponse = Static<typeof ChallengeResponse>

export const ChallengeParams = Type.Object({ name: Type.String({ maxLength: 64 }) })
