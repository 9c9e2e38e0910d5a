import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { noBody } from '../../hal.ts'
import { rotateCsrf } from './csrf.ts'

export const csrfRoutes: FastifyPluginAsyncTypebox = async (scope) => {
  scope.get(
    '/security/csrf',
    {
      schema: {
        tags: ['authn'],
        summary: 'A fresh CSRF token, in the DSPACE-XSRF-TOKEN header and the CSRF cookie',
        response: { 204: noBody() },
      },
    },
    async (request, reply) => {
      rotateCsrf(request)
      return reply.status(204).send()
    },
  )
}
