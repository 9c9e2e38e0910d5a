import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { currentApp } from '../../http/auth.ts'
import { filterValue, responses, TAGS } from '../../http/route-kit.ts'
import { DisputeParams, DisputeResponse, DisputeSchema, FilteredPageQuery, FraudParams, FraudResponse, FraudSchema } from './disputes.schemas.ts'
import type { DisputesService, ListFilter } from './disputes.service.ts'

function filterOf(query: unknown): ListFilter {
  return { merchantId: filterValue(query, 'merchantId'), transactionId: filterValue(query, 'transactionId') }
}

export function disputesRoutes(disputes: DisputesService): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/disputes',
      {
        schema: {
          tags: TAGS,
          summary: 'Disputes of a merchant (filter[merchantId] required)',
          querystring: FilteredPageQuery,
          response: responses({ 200: Type.Array(DisputeSchema) }),
        },
      },
      async (request) => disputes.listDisputes(currentApp(request).id, filterOf(request.query), request.query),
    )
    app.get(
      '/disputes/:disputeId',
      { schema: { tags: TAGS, summary: 'Fetch a dispute', params: DisputeParams, response: responses({ 200: DisputeResponse }) } },
      async (request) => ({ dispute: await disputes.getDispute(currentApp(request).id, request.params.disputeId) }),
    )
    app.get(
      '/frauds',
      {
        schema: {
          tags: TAGS,
          summary: 'Fraud alerts of a merchant (filter[merchantId] required)',
          querystring: FilteredPageQuery,
          response: responses({ 200: Type.Array(FraudSchema) }),
        },
      },
      async (request) => disputes.listFrauds(currentApp(request).id, filterOf(request.query), request.query),
    )
    app.get(
      '/frauds/:fraudId',
      { schema: { tags: TAGS, summary: 'Fetch a fraud alert', params: FraudParams, response: responses({ 200: FraudResponse }) } },
      async (request) => ({ fraud: await disputes.getFraud(currentApp(request).id, request.params.fraudId) }),
    )
  }
}
