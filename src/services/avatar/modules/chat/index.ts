import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import { createRateLimiter } from '../../../../core/http/rate-limit.ts'
import type { ServiceBase } from '../../../../core/service.ts'
import type { ChatConfig } from '../../config.ts'
import { createOpenAiLlm, type LlmPort } from '../../providers/llm/index.ts'
import { createSessions, sessionsRoutes } from '../sessions/index.ts'
import { chatRoutes } from './chat.routes.ts'
import { createChatService } from './chat.service.ts'

export interface ConversationDeps {
  database: Database
  clock: Clock
  redis?: ServiceBase['redis']
  lifecycle: ServiceBase['lifecycle']
  config: ChatConfig
  /** A replacement model (tests); otherwise the OpenAI-compatible one when a key is set, else none (mock). */
  llm?: LlmPort
}

/** The model the configuration asks for: none without a key, so replies come from the mock. */
export function llmFromConfig(config: ChatConfig): LlmPort | undefined {
  if (!config.llm.apiKey) return undefined
  return createOpenAiLlm({ apiKey: config.llm.apiKey, baseUrl: config.llm.baseUrl, model: config.llm.model, maxRetries: config.llm.maxRetries })
}

/** Chat, streaming and session history: the conversation half of the avatar API. */
export function conversationRoutes(deps: ConversationDeps) {
  return async (app: FastifyInstance) => {
    const { config } = deps
    const sessions = createSessions({ database: deps.database, clock: deps.clock, sessionTtlMs: config.sessionTtlMs, historyLimit: config.historyLimit })
    const chat = createChatService({ config, llm: deps.llm ?? llmFromConfig(config), sessions, clock: deps.clock, log: app.log })
    const limiter = config.rateLimit
      ? createRateLimiter({
          ...config.rateLimit,
          clock: deps.clock,
          redis: deps.redis,
          prefix: 'triad:avatar:chat',
          onStoreError: (error) => app.log.warn({ err: error }, 'rate-limit store unavailable; counting in memory'),
        })
      : undefined
    await app.register(chatRoutes, { chat, limiter, maxTextLength: config.maxTextLength, sseHeartbeatMs: config.sseHeartbeatMs, shutdownDeadline: deps.lifecycle.deadline })
    await app.register(sessionsRoutes, { sessions })
  }
}

/** The conversation's replaceable providers (tests set fakes). */
export interface ConversationProviders {
  llm: LlmPort
}
