import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { PaymentsConfig } from '../../config.ts'
import { clientErrors } from '../../http/client-errors.ts'
import { CLIENT_ROUTE, clientErrorResponses, preflight } from '../../http/client-wire.ts'
import { requestSite } from '../../http/request-site.ts'
import { ChallengeParams, ChallengeResponse, PaymentBody, PaymentResponse } from './client-payments.schemas.ts'
import type { ClientPaymentsService } from './client-payments.service.ts'

const TAGS = ['payments']

/** `POST /payments` and the challenge paths it hands out. */
export function clientPaymentsRoutes(payments: ClientPaymentsService, config: PaymentsConfig): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    app.options('/payments', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => preflight(reply))
    app.options('/payments/challenges/:name', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => preflight(reply))

    app.post(
      '/payments',
      {
        config: CLIENT_ROUTE,
        schema: {
          tags: TAGS,
          summary: 'Create a customer-initiated payment (client API, Accept-Version: 1): challenges, or the authorization id',
          body: PaymentBody,
          response: { 200: PaymentResponse, ...clientErrorResponses },
        },
      },
      async (request) => payments.pay(request.body),
    )

    app.post(
      '/payments/challenges/:name',
      {
        config: CLIENT_ROUTE,
        schema: {
          tags: TAGS,
          summary: 'Complete a challenge of a payment: the same body as POST /payments',
          params: ChallengeParams,
          body: PaymentBody,
          response: { 200: ChallengeResponse, ...clientErrorResponses },
        },
      },
      async (request) => payments.challenge(request.params.name, request.body, requestSite(request, config)),
    )

    // Anything else under /payments answers in the client API's shape, not the merchant API's.
    app.all('/payments/*', { schema: { hide: true }, config: { public: true } }, async () => {
      throw clientErrors.endpointNotFound()
    })
  }
}
