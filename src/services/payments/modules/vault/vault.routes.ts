import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { CLIENT_ROUTE, clientErrorResponses, preflight } from '../../http/client-wire.ts'
import { TokenizeBody, TokenResponse } from './vault.schemas.ts'
import type { VaultService } from './vault.service.ts'

const TAGS = ['payments']

/** `POST /vault`: a card number or security code in, a token out. Never logs the value. */
export function vaultRoutes(vault: VaultService): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    app.options('/vault', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => preflight(reply))
    app.post(
      '/vault',
      {
        config: CLIENT_ROUTE,
        schema: {
          tags: TAGS,
          summary: 'Exchange a card number or security code for a token (client API, Accept-Version: 1)',
          body: TokenizeBody,
          response: { 200: TokenResponse, ...clientErrorResponses },
        },
      },
      async (request) => ({ token: await vault.tokenize(request.body.type, request.body.value) }),
    )
  }
}
