import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { rotateCsrf } from './csrf.ts'

export async function csrfRoutes(scope: FastifyInstance): Promise<void> {
  scope.get(
    '/security/csrf',
    {
      schema: {
        tags: ['authn'],
        summary: 'A fresh CSRF token, in the DSPACE-XSRF-TOKEN header and the CSRF cookie',
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      rotateCsrf(request)
      return reply.status(204).send()
    },
  )
}
