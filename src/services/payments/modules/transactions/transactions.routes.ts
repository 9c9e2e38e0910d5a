import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import { currentActor, currentApp } from '../../http/auth.ts'
import { PageQuery, responses, TAGS } from '../../http/route-kit.ts'
import { transactionFilterOf, volumePeriodOf } from './transaction-filters.ts'
import {
  CaptureBody,
  CardParams,
  CardResponse,
  CreateCardBody,
  CreatedCardResponse,
  CreatedTransactionResponse,
  CreateTransactionBody,
  MerchantParams,
  RefundBody,
  TransactionParams,
  TransactionResponse,
  TransactionSchema,
  VoidBody,
  VolumeQuery,
  VolumeResponse,
} from './transactions.schemas.ts'
import type { TransactionsService } from './transactions.service.ts'

export function transactionsRoutes(transactions: TransactionsService, clock: Clock): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/merchants/:merchantId/transactions',
      {
        schema: {
          tags: TAGS,
          summary: 'Charge the card of an earlier transaction (recurring), or of a saved card (deprecated)',
          params: MerchantParams,
          body: CreateTransactionBody,
          response: responses({ 201: CreatedTransactionResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({ transaction: await transactions.createRecurring(currentApp(request).id, request.params.merchantId, request.body) }),
    )

    app.get(
      '/merchants/:merchantId/transactions',
      {
        schema: {
          tags: TAGS,
          summary:
            'The transactions of a merchant (newest first); filter[successful], filter[recurring] = y|n; filter[status], filter[currency], filter[amountMin], filter[amountMax], filter[createdFrom], filter[createdTo], filter[last4], filter[search]',
          description:
            'filter[status]: authorized | captured | refunded | voided | declined (from the counters: declined = not successful, refunded = anything refunded, captured = anything captured, voided = all voided and nothing captured, authorized = nothing captured and something pending). filter[amountMin]/filter[amountMax]: minor units, both included. filter[createdFrom]/filter[createdTo]: a UTC day (YYYY-MM-DD, the whole day) or an ISO 8601 time, both included. filter[last4]: the card\'s last 4 digits. filter[search]: a transaction id, or text found (case-insensitively) in the descriptor, the payment link text or the custom data.',
          params: MerchantParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(TransactionSchema) }),
        },
      },
      async (request) => transactions.listOfMerchant(currentApp(request).id, request.params.merchantId, request.query, transactionFilterOf(request.query)),
    )

    app.get(
      '/merchants/:merchantId/volume',
      {
        schema: {
          tags: TAGS,
          summary: "A merchant's volume per currency and UTC day: authorizations (count, amount), captures and refunds, with the period's totals and today's",
          params: MerchantParams,
          querystring: VolumeQuery,
          response: responses({ 200: VolumeResponse }),
        },
      },
      async (request) => ({ volume: await transactions.volume(currentApp(request).id, request.params.merchantId, volumePeriodOf(request.query, clock.now())) }),
    )

    app.get(
      '/transactions/:transactionId',
      { schema: { tags: TAGS, summary: 'Fetch a transaction', params: TransactionParams, response: responses({ 200: TransactionResponse }) } },
      async (request) => ({ transaction: await transactions.get(currentApp(request).id, request.params.transactionId) }),
    )

    app.post(
      '/transactions/:transactionId/captures',
      {
        schema: {
          tags: TAGS,
          summary: 'Capture (part of) the pending amount; answers the whole updated transaction',
          params: TransactionParams,
          body: CaptureBody,
          response: responses({ 201: TransactionResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({ transaction: await transactions.capture(currentActor(request), request.params.transactionId, request.body) }),
    )

    app.post(
      '/transactions/:transactionId/refunds',
      {
        schema: {
          tags: TAGS,
          summary: 'Refund (part of) the captured amount; answers the whole updated transaction',
          params: TransactionParams,
          body: RefundBody,
          response: responses({ 201: TransactionResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({ transaction: await transactions.refund(currentActor(request), request.params.transactionId, request.body) }),
    )

    app.post(
      '/transactions/:transactionId/voids',
      {
        schema: {
          tags: TAGS,
          summary: 'Void (part of) the pending amount; answers the whole updated transaction',
          params: TransactionParams,
          body: VoidBody,
          response: responses({ 201: TransactionResponse }),
        },
      },
      async (request, reply) =>
        reply.code(201).send({ transaction: await transactions.void(currentActor(request), request.params.transactionId, request.body) }),
    )

    app.post(
      '/merchants/:merchantId/cards',
      {
        schema: {
          tags: TAGS,
          summary: 'Save the card of a transaction (deprecated)',
          params: MerchantParams,
          body: CreateCardBody,
          response: responses({ 201: CreatedCardResponse }),
        },
      },
      async (request, reply) => reply.code(201).send({ card: await transactions.saveCard(currentApp(request).id, request.params.merchantId, request.body) }),
    )

    app.get(
      '/cards/:cardId',
      { schema: { tags: TAGS, summary: 'Fetch a saved card (deprecated)', params: CardParams, response: responses({ 200: CardResponse }) } },
      async (request) => ({ card: await transactions.getCard(currentApp(request).id, request.params.cardId) }),
    )
  }
}
