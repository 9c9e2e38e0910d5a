import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Database } from '../db/create-db.ts'
import type { Lifecycle } from './lifecycle.ts'

const HealthSchema = Type.Object({ status: Type.String() })
const ReadySchema = Type.Object({ status: Type.String({ description: 'ready, draining (stopping: send new traffic elsewhere) or unavailable' }), database: Type.String() })

/** `/healthz`: the process answers. `/readyz`: it can also reach its database and is not stopping. */
export async function healthRoutes(app: FastifyInstance, options: { database: Database; lifecycle: Lifecycle }): Promise<void> {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'The process is up', response: { 200: HealthSchema } } }, async () => ({ status: 'ok' }))

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database is reachable',
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (request, reply) => {
      if (options.lifecycle.draining) return reply.status(503).send({ status: 'draining', database: options.database.dialect })
      try {
        await sql`select 1`.execute(options.database.db)
        return { status: 'ready', database: options.database.dialect }
      } catch (error) {
        request.log.warn({ err: error }, 'database unreachable')
        return reply.status(503).send({ status: 'unavailable', database: options.database.dialect })
      }
    },
  )
}
