import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

/** What any route may answer when a dependency fails, beside the statuses each route lists. */
const FAULT_ANSWERS = [
  'Any route may also answer, in its own service error body:',
  '503 with Retry-After while the instance starts or stops, or while its database cannot serve the request (nothing was applied: send it again);',
  '504 `outcome_unknown` when the database connection was lost during a commit (the request may have been applied: a payments request sent with an Idempotency-Key may be sent again with the same key, which is answered from its stored answer or runs as new; otherwise check before sending it again);',
  '507 `insufficient_storage` when the disk of an SQLite database is full (nothing was applied).',
].join(' ')

/** Registers the OpenAPI document (built from every route's schema) at /docs/json and its UI at /docs. */
export async function registerOpenApi(app: FastifyInstance, options: { version: string; description: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Triad', version: options.version, description: `${options.description}\n\n${FAULT_ANSWERS}` },
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
