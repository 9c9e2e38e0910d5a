import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { AppError } from '../../../../core/errors/app-error.ts'
import { type RateLimiter, rateLimitHook } from '../../../../core/http/rate-limit.ts'
import { openSseStream } from '../../../../core/http/sse.ts'
import { ErrorSchema, INTERNAL_ERROR_DETAIL } from '../../errors.ts'
import { strictBodyCompiler } from '../../validation.ts'
import { ChatReplySchema, chatBodySchema } from './chat.schemas.ts'
import { type ChatService, MAX_LOGGED_ID, type PreparedChat } from './chat.service.ts'

export interface ChatRoutesOptions {
  chat: ChatService
  maxTextLength: number
  sseHeartbeatMs: number
  /** Absent when AVATAR_RATE_LIMIT is 0. */
  limiter?: RateLimiter
  /** Aborted when the server's grace period for stopping ends. */
  shutdownDeadline: AbortSignal
}

const SHUTDOWN_MESSAGE = 'The server is restarting; please send the message again.'

/**
 * The client a request counts against: its API key when it sends one (several users behind
 * one proxy then keep their own budgets), else its IP address. Keys are hashed so that they
 * never sit in memory or Redis in the clear.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const header = request.headers['x-api-key']
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
  const key = (typeof header === 'string' && header) || bearer
  if (key) return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`
  return `ip:${request.ip}`
}

/**
 * Which character replied (`X-Avatar-Persona`), and the requested id when no character has it
 * (`X-Avatar-Persona-Unknown`, percent-encoded, as clients choose ids freely).
 */
export function personaHeaders(prepared: PreparedChat): Record<string, string> {
  const headers: Record<string, string> = { 'x-avatar-persona': prepared.persona.id }
  if (prepared.unknownCharacterId !== undefined) {
    headers['x-avatar-persona-unknown'] = encodeURIComponent(prepared.unknownCharacterId.slice(0, MAX_LOGGED_ID))
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
  const { chat, limiter } = options
  const body = chatBodySchema(options.maxTextLength)
  const onRequest = limiter
    ? rateLimitHook({
        limiter,
        keyOf: rateLimitKey,
        onExceeded: (result) =>
          new AppError('rate_limited', `Rate limit exceeded. Try again in ${result.resetSeconds} seconds.`, {
            status: 429,
            headers: { 'retry-after': String(result.resetSeconds) },
          }),
      })
    : undefined
  const errors = { 400: ErrorSchema, 429: ErrorSchema, 500: ErrorSchema }

  // A stream can last as long as a model talks. On shutdown a running reply goes on to its
  // `done`; only one still running when the grace period ends stops, with an error event that
  // asks the client to send the message again.
  const deadline = options.shutdownDeadline

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
      const send = (data: unknown) => sse.send({ data: JSON.stringify(data) })
      // Stops the generation when the client leaves or the server's grace period ends.
      const stop = new AbortController()
      const onClientGone = () => stop.abort(sse.signal.reason)
      const onDeadline = () => stop.abort(deadline.reason)
      sse.signal.addEventListener('abort', onClientGone, { once: true })
      if (deadline.aborted) onDeadline()
      else deadline.addEventListener('abort', onDeadline, { once: true })
      try {
        const outcome = await chat.stream(prepared, { log: request.log, signal: stop.signal, onToken: (content) => send({ type: 'token', content }) })
        if (outcome.type === 'done') await send({ type: 'done', ...outcome.reply })
        else if (outcome.type === 'error') await send({ type: 'error', message: outcome.message })
        else if (deadline.aborted) await send({ type: 'error', message: SHUTDOWN_MESSAGE })
      } catch (error) {
        request.log.error({ err: error }, 'chat stream failed')
        await send({ type: 'error', message: INTERNAL_ERROR_DETAIL })
      } finally {
        deadline.removeEventListener('abort', onDeadline)
        sse.signal.removeEventListener('abort', onClientGone)
        sse.close()
      }
    },
  )
}
