import { Type } from '@sinclair/typebox'

/** Who did it (src/services/payments/actor.ts): on trail entries and webhook events. */
export const ActorSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('app'), id: Type.String({ description: 'the app whose key (or app-key dashboard sign-in) made the change' }) }),
    Type.Object({
      type: Type.Literal('user'),
      id: Type.String({ description: 'the merchant user signed in to the dashboard' }),
      email: Type.String({ description: 'their e-mail address when they acted' }),
    }),
  ],
  { description: 'who made the change: an app, or a merchant user in the dashboard; absent when nobody of the merchant did (a payment, a dispute)' },
)
