import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

/** Registers the OpenAPI document (built from every route's schema) at /docs/json and its UI at /docs. */
export async function registerOpenApi(app: FastifyInstance, options: { version: string; description: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Triad', version: options.version, description: options.description },
      tags: [
        { name: 'health', description: 'Liveness and readiness' },
        { name: 'authn', description: 'Repository authentication (DSpace-compatible)' },
        { name: 'avatar', description: 'Conversational avatar engine' },
        { name: 'payments', description: 'Payment processing (Paylike-compatible)' },
      ],
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
}
