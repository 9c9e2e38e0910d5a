import { Type } from '@sinclair/typebox'
import { identifierSchema, MAX_IDENTIFIER_LENGTH } from '../../../../core/http/identifiers.ts'
import { ACTIONS, EMOTIONS } from '../../expressions.ts'

const SESSION_ID_PATTERN = '^[A-Za-z0-9_.:@-]+$'

/** A session id, as clients choose them. */
export const SessionIdSchema = identifierSchema({
  pattern: SESSION_ID_PATTERN,
  description: `1 to ${MAX_IDENTIFIER_LENGTH} letters, digits or _ . : @ -`,
})

export const SessionParamsSchema = Type.Object({ session_id: SessionIdSchema })

export const ListSessionsQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'at most this many sessions (all active ones when absent)' })),
  before: Type.Optional(identifierSchema({ pattern: SESSION_ID_PATTERN, description: 'the id of the last session of the previous page' })),
})

export const SessionListSchema = Type.Object({
  sessions: Type.Array(
    Type.Object({
      id: Type.String(),
      created_at: Type.String({ description: 'ISO 8601' }),
      message_count: Type.Integer(),
    }),
  ),
})

export const HistorySchema = Type.Object({
  sessionId: Type.String(),
  messages: Type.Array(
    Type.Object({
      role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('operator')], {
        description: '`operator`: what an operator made the avatar say (POST /v1/session/{session_id}/say)',
      }),
      content: Type.String(),
      timestamp: Type.String({ description: 'ISO 8601' }),
      emotion: Type.Optional(Type.Union(EMOTIONS.map((value) => Type.Literal(value)))),
      action: Type.Optional(Type.Union(ACTIONS.map((value) => Type.Literal(value)))),
    }),
  ),
})

export const DeletedSchema = Type.Object({
  message: Type.String({ description: 'always "Session deleted": after the call the session does not exist' }),
  cleared: Type.Boolean({ description: 'whether there was an active session to delete (as the meta-human reference backend answers)' }),
})
