import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { createRateLimiter, type RateLimiter, type RateLimitRule } from '../../../../core/http/rate-limit.ts'
import type { ServiceBase } from '../../../../core/service.ts'
import type { ChatConfig } from '../../config.ts'
import { type AvatarMetrics, noAvatarMetrics } from '../../metrics.ts'
import { createOpenAiLlm, type LlmPort } from '../../providers/llm/index.ts'
import { controlRoutes, createControl } from '../control/index.ts'
import { createSessions, sessionsRoutes } from '../sessions/index.ts'
import { chatRoutes } from './chat.routes.ts'
import { createChatService } from './chat.service.ts'
import { rateLimitExceeded } from './chat.limits.ts'
import { chatSocketRoutes } from './chat.socket.ts'
import { createTurnRunner } from './chat.turn.ts'
import type { AsrProvider } from '../../providers/asr/index.ts'
import type { TtsProvider } from '../../providers/tts/index.ts'

export interface ConversationDeps {
  database: Database
  clock: Clock
  ids: IdGenerator
  redis?: ServiceBase['redis']
  lifecycle: ServiceBase['lifecycle']
  config: ChatConfig
  /** A replacement model (tests); otherwise the OpenAI-compatible one when a key is set, else none (mock). */
  llm?: LlmPort
  /** For what concerns no one request (an unknown character asked for by a WebSocket frame logs with its socket's). */
  log: FastifyBaseLogger
  metrics?: AvatarMetrics
  /** The recogniser and synthesiser of voice mode on `/ws`; without them voice frames are refused. */
  speech?: { asr: AsrProvider; tts: TtsProvider; preemptive: boolean }
}

/** The model the configuration asks for: none without a key, so replies come from the mock. */
export function llmFromConfig(config: ChatConfig): LlmPort | undefined {
  if (!config.llm.apiKey) return undefined
  return createOpenAiLlm({ apiKey: config.llm.apiKey, baseUrl: config.llm.baseUrl, model: config.llm.model, maxRetries: config.llm.maxRetries })
}

/**
 * Chat, streaming and session history: the conversation half of the avatar API. `routes` go
 * under `/v1`; `socketRoutes` (`/ws`) beside it at the root, as the meta-human web app builds
 * its WebSocket URL. Both share one chat service, one rate limiter and one way to run a turn,
 * and the operator's control channel, whose messages reach pages over either.
 */
export function createConversation(deps: ConversationDeps) {
  const { config } = deps
  const sessions = createSessions({
    database: deps.database,
    clock: deps.clock,
    sessionTtlMs: config.sessionTtlMs,
    historyLimit: config.historyLimit,
    onSweepFailed: (error) => deps.log.warn({ err: error }, 'sweeping expired avatar sessions failed; tried again at the next message'),
  })
  const metrics = deps.metrics ?? noAvatarMetrics
  const chat = createChatService({ config, llm: deps.llm ?? llmFromConfig(config), sessions, clock: deps.clock, log: deps.log, metrics })
  const runTurn = createTurnRunner(chat, deps.lifecycle.deadline)
  const control = createControl({ redis: deps.redis, sessions, clock: deps.clock, ids: deps.ids, log: deps.log })
  const makeLimiter = (app: FastifyInstance, rule: RateLimitRule | undefined, prefix: string) =>
    rule
      ? createRateLimiter({
          ...rule,
          clock: deps.clock,
          redis: deps.redis,
          prefix,
          onStoreError: (error) => app.log.warn({ err: error }, 'rate-limit store unavailable; counting in memory'),
        })
      : undefined
  let limiter: RateLimiter | undefined
  const limiterFor = (app: FastifyInstance) => {
    limiter ??= makeLimiter(app, config.rateLimit, 'triad:avatar:chat')
    return limiter
  }
  return {
    routes: async (app: FastifyInstance) => {
      await app.register(chatRoutes, { chat, runTurn, limiter: limiterFor(app), maxTextLength: config.maxTextLength, sseHeartbeatMs: config.sseHeartbeatMs, metrics })
      await app.register(sessionsRoutes, { sessions })
      await app.register(controlRoutes, {
        control: control.service,
        operatorKey: config.operator.key,
        limiter: makeLimiter(app, config.operator.rateLimit, 'triad:avatar:operator'),
        onExceeded: rateLimitExceeded,
        maxTextLength: config.maxTextLength,
        sseHeartbeatMs: config.sseHeartbeatMs,
      })
    },
    socketRoutes: async (app: FastifyInstance) => {
      await app.register(chatSocketRoutes, {
        chat,
        runTurn,
        limiter: limiterFor(app),
        maxTextLength: config.maxTextLength,
        heartbeatMs: config.wsHeartbeatMs,
        lifecycle: deps.lifecycle,
        metrics,
        control: control.service,
        voice: deps.speech ? { ...deps.speech, shutdownDeadline: deps.lifecycle.deadline } : undefined,
      })
    },
    /** Closes the operator channel's own connection (its Redis subscriber). */
    close: () => control.close(),
  }
}

/** The conversation's replaceable providers (tests set fakes). */
export interface ConversationProviders {
  llm: LlmPort
}
