import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AvatarMetrics } from '../../metrics.ts'
import { Type } from '@sinclair/typebox'
import { type RateLimiter, rateLimitHook } from '../../../../core/http/rate-limit.ts'
import { openSseStream } from '../../../../core/http/sse.ts'
import { cutText } from '../../../../core/text.ts'
import { ErrorSchema } from '../../errors.ts'
import { strictBodyCompiler } from '../../validation.ts'
import { rateLimitExceeded, rateLimitKey } from './chat.limits.ts'
import { ChatReplySchema, chatBodySchema } from './chat.schemas.ts'
import { type ChatService, MAX_LOGGED_ID, type PreparedChat } from './chat.service.ts'
import type { TurnRunner } from './chat.turn.ts'

export interface ChatRoutesOptions {
  chat: ChatService
  maxTextLength: number
  sseHeartbeatMs: number
  /** Absent when AVATAR_RATE_LIMIT is 0. */
  limiter?: RateLimiter
  /** A streamed turn, shared with the WebSocket transport. */
  runTurn: TurnRunner
  metrics: AvatarMetrics
}

/**
 * Which character replied (`X-Avatar-Persona`), and the requested id when no character has it
 * (`X-Avatar-Persona-Unknown`, percent-encoded, as clients choose ids freely).
 */
function personaHeaders(prepared: PreparedChat): Record<string, string> {
  const headers: Record<string, string> = { 'x-avatar-persona': prepared.persona.id }
  if (prepared.unknownCharacterId !== undefined) {
    headers['x-avatar-persona-unknown'] = encodeURIComponent(cutText(prepared.unknownCharacterId, MAX_LOGGED_ID))
  }
  return headers
}

const PERSONA_HEADERS = {
  'x-avatar-persona': { type: 'string', description: 'the id of the character that replied' },
  'x-avatar-persona-unknown': {
    type: 'string',
    description: 'present when meta.characterId named no character (the default one replied): that id, percent-encoded',
  },
}

const StreamResponse = {
  description:
    'A Server-Sent Events stream: `data: {"type":"token","content":…}` events, then one `{"type":"done","replyText","emotion","action"}` ' +
    'or, if the model fails after tokens were sent, one `{"type":"error","message"}`.',
  content: { 'text/event-stream': { schema: Type.String() } },
  headers: PERSONA_HEADERS,
}

export const chatRoutes: FastifyPluginAsyncTypebox<ChatRoutesOptions> = async (app, options) => {
  const { chat, limiter, runTurn } = options
  const body = chatBodySchema(options.maxTextLength)
  const onRequest = limiter
    ? rateLimitHook({
        limiter,
        keyOf: rateLimitKey,
        onExceeded: rateLimitExceeded,
      })
    : undefined
  const errors = { 400: ErrorSchema, 429: ErrorSchema, 500: ErrorSchema }

  app.post(
    '/chat',
    {
      onRequest,
      validatorCompiler: strictBodyCompiler,
      schema: {
        tags: ['avatar'],
        summary: 'Reply to a message, with an emotion and an action for the avatar',
        body,
        response: { 200: { ...ChatReplySchema, headers: PERSONA_HEADERS }, ...errors },
      },
    },
    async (request, reply) => {
      const prepared = await chat.prepare(request.body, { log: request.log })
      reply.headers(personaHeaders(prepared))
      // A client that hangs up stops the model call too: nobody would read the reply.
      const gone = new AbortController()
      const onClose = () => {
        if (!reply.raw.writableFinished) gone.abort(new Error('client disconnected'))
      }
      reply.raw.once('close', onClose)
      try {
        return await chat.reply(prepared, { log: request.log, signal: gone.signal })
      } finally {
        reply.raw.off('close', onClose)
      }
    },
  )

  app.post(
    '/chat/stream',
    {
      onRequest,
      validatorCompiler: strictBodyCompiler,
      schema: {
        tags: ['avatar'],
        summary: 'Reply to a message as a stream of tokens (Server-Sent Events)',
        body,
        produces: ['text/event-stream'],
        response: { 200: StreamResponse, ...errors },
      },
    },
    async (request, reply) => {
      // Everything that can fail with a JSON error happens before the stream opens.
      const prepared = await chat.prepare(request.body, { log: request.log })
      reply.headers(personaHeaders(prepared))
      const sse = openSseStream(request, reply, { heartbeatMs: options.sseHeartbeatMs })
      const closed = options.metrics.streamOpened('sse')
      try {
        await runTurn(prepared, { log: request.log, clientGone: sse.signal, send: (event) => sse.send({ data: JSON.stringify(event) }) })
      } finally {
        closed()
        sse.close()
      }
    },
  )
}
