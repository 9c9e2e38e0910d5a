import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { coreError } from '../../../../core/errors/codes.ts'
import { type RateLimiter, rateLimitHook } from '../../../../core/http/rate-limit.ts'
import { openSseStream, type SseStream } from '../../../../core/http/sse.ts'
import { hashSecretToken, safeEqual } from '../../../../core/security/secret-token.ts'
import { avatarError, ErrorSchema } from '../../errors.ts'
import { strictBodyCompiler } from '../../validation.ts'
import { SessionParamsSchema } from '../sessions/index.ts'
import { ActBody, sayBodySchema, SentSchema } from './control.schemas.ts'
import type { ControlService } from './control.service.ts'

export interface ControlRoutesOptions {
  control: ControlService
  /** AVATAR_OPERATOR_KEY; without it the operator routes answer 404. */
  operatorKey?: string
  /** Absent when AVATAR_OPERATOR_RATE_LIMIT is 0. */
  limiter?: RateLimiter
  /** Counts a request against the limit; throws the 429. */
  onExceeded: Parameters<typeof rateLimitHook>[0]['onExceeded']
  maxTextLength: number
  sseHeartbeatMs: number
}

const OPERATOR_HEADERS = {
  'www-authenticate': { type: 'string', description: 'on 401: `Bearer realm="avatar-operator"`' },
}

const EventsDescription = [
  'A Server-Sent Events stream of what operators send to this session: `data: {"type":"say","id","text","emotion","action","voice"?,"at"}`',
  'and `data: {"type":"act","id","emotion"?,"action"?,"at"}`, from whichever instance they were sent to (Redis pub/sub when REDIS_URL is set).',
  'The same messages arrive as text frames on `/ws?session_id=…`. Comments (`: ping`) every AVATAR_SSE_HEARTBEAT keep idle connections open.',
  'Open like the WebSocket: whoever knows the session id may listen, as the page showing it does.',
].join(' ')

/** The operator channel: events (SSE) for the pages, say and act for the operator. */
export const controlRoutes: FastifyPluginAsyncTypebox<ControlRoutesOptions> = async (app, options) => {
  const { control, limiter } = options
  const expected = options.operatorKey === undefined ? undefined : hashSecretToken(options.operatorKey)

  /**
   * Refuses a request without the operator key: 404 when none is configured (the routes are
   * off, and a client's mistake is not a server failure), 401 without one, 403 with a wrong one.
   */
  const requireOperator = async (request: FastifyRequest) => {
    if (expected === undefined) {
      throw avatarError('operator_disabled', 'The operator channel is off on this server: set AVATAR_OPERATOR_KEY to enable POST /v1/session/{session_id}/say and /act')
    }
    const presented = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
    if (presented === undefined) {
      throw coreError('unauthorized', 'The operator key is required: send it as Authorization: Bearer <AVATAR_OPERATOR_KEY>', {
        headers: { 'www-authenticate': 'Bearer realm="avatar-operator"' },
      })
    }
    // Hashes compared in constant time: equal lengths whatever the key sent.
    if (!safeEqual(hashSecretToken(presented), expected)) throw coreError('forbidden', 'The operator key is not valid')
  }
  // Counted before the key is checked, so guessing keys is limited too; by address, as a
  // guesser changes keys.
  const onRequest = limiter
    ? [rateLimitHook({ limiter, keyOf: (request) => `ip:${request.ip}`, onExceeded: options.onExceeded }), requireOperator]
    : [requireOperator]
  const errors = { 400: ErrorSchema, 401: { ...ErrorSchema, headers: OPERATOR_HEADERS }, 403: ErrorSchema, 404: ErrorSchema, 429: ErrorSchema, 503: ErrorSchema }

  // Streams still open when the app closes end then, or the server would wait for them.
  const closing = new AbortController()
  app.addHook('preClose', async () => closing.abort())

  app.get(
    '/session/:session_id/events',
    {
      schema: {
        tags: ['avatar'],
        summary: 'Listen to what operators send to a session (Server-Sent Events)',
        description: EventsDescription,
        params: SessionParamsSchema,
        produces: ['text/event-stream'],
        response: {
          200: { description: 'An event stream that stays open', content: { 'text/event-stream': { schema: Type.String() } } },
          400: ErrorSchema,
          503: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const sink: { stream?: SseStream } = {}
      // Subscribed before the stream opens: a client that sees the response headers misses nothing sent after.
      const stop = await control.subscribe(request.params.session_id, (message) => void sink.stream?.send({ data: message }))
      const opened = openSseStream(request, reply, { heartbeatMs: options.sseHeartbeatMs })
      sink.stream = opened
      const ended = new AbortController()
      try {
        await new Promise<void>((resolve) => {
          if (closing.signal.aborted) return resolve()
          opened.signal.addEventListener('abort', () => resolve(), { once: true, signal: ended.signal })
          closing.signal.addEventListener('abort', () => resolve(), { once: true, signal: ended.signal })
        })
      } finally {
        ended.abort()
        stop()
        opened.close()
      }
    },
  )

  app.post(
    '/session/:session_id/say',
    {
      onRequest,
      validatorCompiler: strictBodyCompiler,
      schema: {
        tags: ['avatar'],
        summary: 'Make the avatar say something now (operator)',
        description:
          'Sends `text` to every page showing the session, which speaks it (no model is asked), and keeps it in the session\'s history with role `operator`. ' +
          'Needs `Authorization: Bearer <AVATAR_OPERATOR_KEY>`; rate-limited by AVATAR_OPERATOR_RATE_LIMIT per client address.',
        params: SessionParamsSchema,
        body: sayBodySchema(options.maxTextLength),
        response: { 200: SentSchema, ...errors },
      },
    },
    async (request) => {
      if (request.body.text.trim() === '') throw coreError('validation_failed', 'text must not be only blanks')
      return control.say(request.params.session_id, request.body)
    },
  )

  app.post(
    '/session/:session_id/act',
    {
      onRequest,
      validatorCompiler: strictBodyCompiler,
      schema: {
        tags: ['avatar'],
        summary: 'Make the avatar show an emotion or play an action now (operator)',
        description: 'Sends `emotion` and/or `action` to every page showing the session. Needs the operator key, as `say` does.',
        params: SessionParamsSchema,
        body: ActBody,
        response: { 200: SentSchema, ...errors },
      },
    },
    async (request) => {
      if (request.body.emotion === undefined && request.body.action === undefined) {
        throw coreError('validation_failed', 'act needs an emotion, an action or both')
      }
      return control.act(request.params.session_id, request.body)
    },
  )
}
