import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { currentApp } from '../../http/auth.ts'
import { fieldError } from '../../http/errors.ts'
import { EmptyBody, filterValue, PageQuery, responses } from '../../http/route-kit.ts'
import {
  CreatedWebhookResponse,
  CreateWebhookBody,
  DELIVERY_STATUSES,
  EventParams,
  EventResponse,
  EventSchema,
  EventsQuery,
  MerchantParams,
  ResendBody,
  WebhookParams,
  WebhookResponse,
  WebhookSchema,
} from './webhooks.schemas.ts'
import type { WebhooksService } from './webhooks.service.ts'

const TAGS = ['payments', 'webhooks']

/** `filter[deliveryStatus]`, checked here too: a query parser that nests brackets passes the schema's flat key by. */
function deliveryStatusFilter(query: unknown): (typeof DELIVERY_STATUSES)[number] | undefined {
  const value = filterValue(query, 'deliveryStatus')
  if (value === undefined) return undefined
  const status = DELIVERY_STATUSES.find((candidate) => candidate === value)
  if (!status) throw fieldError('filter[deliveryStatus]', `must be one of ${DELIVERY_STATUSES.join(', ')}`)
  return status
}

export function webhooksRoutes(webhooks: WebhooksService): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/merchants/:merchantId/webhooks',
      {
        schema: {
          tags: TAGS,
          summary: 'Register a webhook endpoint; the answer shows its signing secret, once',
          params: MerchantParams,
          body: CreateWebhookBody,
          response: responses({ 201: CreatedWebhookResponse }),
        },
      },
      async (request, reply) => reply.code(201).send({ webhook: await webhooks.create(currentApp(request).id, request.params.merchantId, request.body) }),
    )

    app.get(
      '/merchants/:merchantId/webhooks',
      {
        schema: {
          tags: TAGS,
          summary: "A merchant's webhook endpoints (newest first), with their status and why one was disabled",
          params: MerchantParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(WebhookSchema) }),
        },
      },
      async (request) => webhooks.list(currentApp(request).id, request.params.merchantId, request.query),
    )

    app.get(
      '/merchants/:merchantId/webhooks/:webhookId',
      { schema: { tags: TAGS, summary: 'Fetch a webhook endpoint', params: WebhookParams, response: responses({ 200: WebhookResponse }) } },
      async (request) => ({ webhook: await webhooks.get(currentApp(request).id, request.params.merchantId, request.params.webhookId) }),
    )

    app.delete(
      '/merchants/:merchantId/webhooks/:webhookId',
      {
        schema: {
          tags: TAGS,
          summary: 'Remove a webhook endpoint (deliveries still waiting for it are cancelled)',
          params: WebhookParams,
          response: responses({ 204: EmptyBody }),
        },
      },
      async (request, reply) => {
        await webhooks.remove(currentApp(request).id, request.params.merchantId, request.params.webhookId)
        return reply.code(204).send()
      },
    )

    app.post(
      '/merchants/:merchantId/webhooks/:webhookId/rotate-secret',
      {
        schema: {
          tags: TAGS,
          summary: 'Replace the signing secret; the answer shows the new one, once. For 24 hours deliveries carry signatures under both',
          params: WebhookParams,
          response: responses({ 201: CreatedWebhookResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({ webhook: await webhooks.rotateSecret(currentApp(request).id, request.params.merchantId, request.params.webhookId) }),
    )

    app.post(
      '/merchants/:merchantId/webhooks/:webhookId/enable',
      {
        schema: {
          tags: TAGS,
          summary: 'Enable an endpoint Triad disabled after its deliveries kept failing',
          params: WebhookParams,
          response: responses({ 201: WebhookResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({ webhook: await webhooks.enable(currentApp(request).id, request.params.merchantId, request.params.webhookId) }),
    )

    app.get(
      '/merchants/:merchantId/events',
      {
        schema: {
          tags: TAGS,
          summary: "A merchant's events (newest first; filter[type], filter[transactionId], filter[deliveryStatus]), each with its deliveries and their attempts",
          params: MerchantParams,
          querystring: EventsQuery,
          response: responses({ 200: Type.Array(EventSchema) }),
        },
      },
      async (request) =>
        webhooks.listEvents(currentApp(request).id, request.params.merchantId, request.query, {
          type: filterValue(request.query, 'type'),
          transactionId: filterValue(request.query, 'transactionId'),
          deliveryStatus: deliveryStatusFilter(request.query),
        }),
    )

    app.get(
      '/merchants/:merchantId/events/:eventId',
      { schema: { tags: TAGS, summary: 'Fetch an event with its deliveries', params: EventParams, response: responses({ 200: EventResponse }) } },
      async (request) => ({ event: await webhooks.getEvent(currentApp(request).id, request.params.merchantId, request.params.eventId) }),
    )

    app.post(
      '/merchants/:merchantId/events/:eventId/resend',
      {
        schema: {
          tags: TAGS,
          summary: 'Send an event again (same id and body) to its endpoints, or to one named endpoint',
          params: EventParams,
          body: ResendBody,
          response: responses({ 201: EventResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({
          event: await webhooks.resend(currentApp(request).id, request.params.merchantId, request.params.eventId, request.body.webhookId),
        }),
    )
  }
}
