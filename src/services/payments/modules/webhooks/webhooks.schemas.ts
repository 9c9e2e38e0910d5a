import { type Static, Type } from '@sinclair/typebox'
import { identifierSchema } from '../../../../core/http/identifiers.ts'
import { EVENT_TYPES } from '../../events/event-sink.port.ts'
import { ActorSchema } from '../../http/actor.schema.ts'
import { PageQuery } from '../../http/route-kit.ts'

const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: 'an event type' },
)

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'where events are POSTed: https (http only to a loopback host for a test merchant, or with PAYMENTS_WEBHOOK_ALLOW_HTTP)',
    }),
    events: Type.Array(Type.Union([EventTypeSchema, Type.Literal('*')]), {
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      description: `the event types to send (or "*" for all): ${EVENT_TYPES.join(', ')}`,
    }),
    description: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
)
export type CreateWebhookInput = Static<typeof CreateWebhookBody>

export const WebhookSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Optional(Type.String()),
  created: Type.String({ format: 'date-time' }),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  disabledReason: Type.Optional(Type.String({ description: 'why Triad disabled it (deliveries kept failing)' })),
  disabled: Type.Optional(Type.String({ format: 'date-time', description: 'when it was disabled' })),
  failingSince: Type.Optional(Type.String({ format: 'date-time', description: 'the first failed attempt since the last delivered one' })),
  previousSecretExpires: Type.Optional(
    Type.String({ format: 'date-time', description: 'after a secret rotation: until then every delivery is signed with the previous secret as well' }),
  ),
})
export type WebhookDto = Static<typeof WebhookSchema>

export const CreatedWebhookResponse = Type.Object({
  webhook: Type.Intersect([
    WebhookSchema,
    Type.Object({
      secret: Type.String({
        description:
          "the signing secret, in Standard Webhooks' form whsec_<base64>: shown this once, never again. It verifies both webhook-signature (Standard Webhooks: HMAC-SHA256 keyed with the base64-decoded bytes) and Triad-Signature (keyed with the whole string)",
      }),
    }),
  ]),
})
export const WebhookResponse = Type.Object({ webhook: WebhookSchema })

const AttemptSchema = Type.Object({
  id: Type.String(),
  created: Type.String({ format: 'date-time', description: 'when the request was sent' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
  latency: Type.Integer({ description: 'milliseconds until the answer (or the failure)' }),
  responseCode: Type.Optional(Type.Integer({ description: "the endpoint's HTTP status, when it answered" })),
  error: Type.Optional(Type.String()),
})

/** What a delivery can be: waiting (or retrying), delivered, given up, or cancelled with its endpoint. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const

const DeliverySchema = Type.Object({
  id: Type.String(),
  webhookId: Type.String(),
  status: Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status))),
  created: Type.String({ format: 'date-time' }),
  nextAttempt: Type.Optional(Type.String({ format: 'date-time', description: 'while pending' })),
  completed: Type.Optional(Type.String({ format: 'date-time' })),
  lastError: Type.Optional(Type.String()),
  attempts: Type.Array(AttemptSchema),
})

export const EventSchema = Type.Object({
  id: Type.String({ description: 'stable: every attempt and resend of the event carries it' }),
  type: Type.String(),
  created: Type.String({ format: 'date-time' }),
  data: Type.Unknown({ description: 'the object as the merchant API returns it (transaction, dispute or fraud alert)' }),
  actor: Type.Optional(ActorSchema),
  deliveries: Type.Array(DeliverySchema),
})
export type EventDto = Static<typeof EventSchema>
export type DeliveryDto = Static<typeof DeliverySchema>
export type AttemptDto = Static<typeof AttemptSchema>

export const EventResponse = Type.Object({ event: EventSchema })

export const ResendBody = Type.Object(
  { webhookId: Type.Optional(identifierSchema({ description: "only to this endpoint (its event list aside); default: every enabled endpoint that takes the event's type" })) },
  { additionalProperties: true },
)

export const EventsQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    'filter[type]': Type.Optional(Type.String({ maxLength: 64 })),
    'filter[transactionId]': Type.Optional(identifierSchema()),
    'filter[deliveryStatus]': Type.Optional(
      Type.Union(
        DELIVERY_STATUSES.map((status) => Type.Literal(status)),
        { description: 'only events with a delivery in this status (failed: given up after the retry window)' },
      ),
    ),
  }),
])

export const MerchantParams = Type.Object({ merchantId: identifierSchema() })
export const WebhookParams = Type.Object({ merchantId: identifierSchema(), webhookId: identifierSchema() })
export const EventParams = Type.Object({ merchantId: identifierSchema(), eventId: identifierSchema() })
