import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { currentApp } from '../../http/auth.ts'
import { PageQuery, responses, TAGS } from '../../http/route-kit.ts'
import { LineParams, LineResponse, LineSchema, MerchantParams } from './lines.schemas.ts'
import type { LinesService } from './lines.service.ts'

export function linesRoutes(lines: LinesService): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/merchants/:merchantId/lines',
      {
        schema: {
          tags: TAGS,
          summary: 'The ledger lines of a merchant (newest first)',
          params: MerchantParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(LineSchema) }),
        },
      },
      async (request) => lines.list(currentApp(request).id, request.params.merchantId, request.query),
    )
    app.get(
      '/lines/:lineId',
      { schema: { tags: TAGS, summary: 'Fetch a ledger line', params: LineParams, response: responses({ 200: LineResponse }) } },
      async (request) => ({ line: await lines.get(currentApp(request).id, request.params.lineId) }),
    )
  }
}
