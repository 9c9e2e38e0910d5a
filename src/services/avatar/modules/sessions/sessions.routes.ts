import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorSchema } from '../../errors.ts'
import { DeletedSchema, HistorySchema, ListSessionsQuerySchema, SessionListSchema, SessionParamsSchema } from './sessions.schemas.ts'
import type { SessionsService } from './sessions.service.ts'

export const sessionsRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsService }> = async (app, { sessions }) => {
  app.get(
    '/sessions',
    {
      schema: {
        tags: ['avatar'],
        summary: 'List active sessions, newest first',
        querystring: ListSessionsQuerySchema,
        response: { 200: SessionListSchema, 400: ErrorSchema, 500: ErrorSchema },
      },
    },
    async (request) => sessions.list(request.query),
  )

  app.get(
    '/session/:session_id/history',
    {
      schema: {
        tags: ['avatar'],
        summary: "A session's messages in conversation order",
        params: SessionParamsSchema,
        response: { 200: HistorySchema, 400: ErrorSchema, 404: ErrorSchema, 500: ErrorSchema },
      },
    },
    async (request) => sessions.history(request.params.session_id),
  )

  app.delete(
    '/session/:session_id',
    {
      schema: {
        tags: ['avatar'],
        summary: 'Delete a session and its history',
        description: 'Idempotent: an unknown or expired id answers 200 too, with `cleared: false`.',
        params: SessionParamsSchema,
        response: { 200: DeletedSchema, 400: ErrorSchema, 500: ErrorSchema },
      },
    },
    async (request) => ({ message: 'Session deleted', cleared: await sessions.remove(request.params.session_id) }),
  )
}
