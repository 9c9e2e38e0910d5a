import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { currentApp } from '../../http/auth.ts'
import { booleanFilter, PageQuery, responses, TAGS } from '../../http/route-kit.ts'
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
} from './transactions.schemas.ts'
import type { TransactionsService } from './transactions.service.ts'

export function transactionsRoutes(transactions: TransactionsService): FastifyPluginAsync {
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
          summary: 'The transactions of a merchant (newest first; filter[successful], filter[recurring] = y|n)',
          params: MerchantParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(TransactionSchema) }),
        },
      },
      async (request) =>
        transactions.listOfMerchant(currentApp(request).id, request.params.merchantId, request.query, {
          successful: booleanFilter(request.query, 'successful'),
          recurring: booleanFilter(request.query, 'recurring'),
        }),
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
        reply.code(201).send({ transaction: await transactions.capture(currentApp(request).id, request.params.transactionId, request.body) }),
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
        reply.code(201).send({ transaction: await transactions.refund(currentApp(request).id, request.params.transactionId, request.body) }),
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
        reply.code(201).send({ transaction: await transactions.void(currentApp(request).id, request.params.transactionId, request.body) }),
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
