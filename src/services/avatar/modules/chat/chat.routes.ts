import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { type RateLimiter, rateLimitHook } from '../../../../core/http/rate-limit.ts'
import { openSseStream } from '../../../../core/http/sse.ts'
import { ErrorSchema } from '../../errors.ts'
import { strictBodyCompiler } from '../../validation.ts'
import { rateLimitExceeded, rateLimitKey } from './chat.limits.ts'
import { ChatReplySchema, chatBodySchema } from './chat.schemas.ts'
import type { ChatService } from './chat.service.ts'
import type { TurnRunner } from './chat.turn.ts'

export interface ChatRoutesOptions {
  chat: ChatService
  maxTextLength: number
  sseHeartbeatMs: number
  /** Absent when AVATAR_RATE_LIMIT is 0. */
  limiter?: RateLimiter
  /** A streamed turn, shared with the WebSocket transport. */
  runTurn: TurnRunner
}

const StreamResponse = {
  description:
    'A Server-Sent Events stream: `data: {"type":"token","content":…}` events, then one `{"type":"done","replyText","emotion","action"}` ' +
    'or, if the model fails after tokens were sent, one `{"type":"error","message"}`.',
  content: { 'text/event-stream': { schema: Type.String() } },
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
        response: { 200: ChatReplySchema, ...errors },
      },
    },
    async (request, reply) => {
      const prepared = await chat.prepare(request.body)
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
      const prepared = await chat.prepare(request.body)
      const sse = openSseStream(request, reply, { heartbeatMs: options.sseHeartbeatMs })
      try {
        await runTurn(prepared, { log: request.log, clientGone: sse.signal, send: (event) => sse.send({ data: JSON.stringify(event) }) })
      } finally {
        sse.close()
      }
    },
  )
}
