import type { Static, TObject } from '@sinclair/typebox'
import { parseDuration } from '../../../../core/config/duration.ts'
import { Env } from '../../../../core/config/load-config.ts'
import { RATE_LIMIT_PATTERN, parseRateLimit } from '../../../../core/http/rate-limit.ts'
import { loadPersonas } from './personas.ts'

/** The environment variables of the conversation half of the avatar service. */
export const chatEnvSchema = {
  AVATAR_LLM_TIMEOUT: Env.duration('30s'),
  AVATAR_LLM_MAX_RETRIES: Env.integer('how many times a failed model call is retried (within AVATAR_LLM_TIMEOUT)', 2),
  AVATAR_SYSTEM_PROMPT: Env.optionalString("the default character's system prompt"),
  AVATAR_CHARACTERS_FILE: Env.optionalString('the path of a JSON file of extra characters'),
  AVATAR_SESSION_TTL: Env.duration('24h'),
  AVATAR_HISTORY_LIMIT: Env.integer('how many earlier messages of a session the model sees', 20),
  AVATAR_MAX_TEXT_LENGTH: Env.integer('the longest userText accepted, in characters', 4000, 1),
  AVATAR_RATE_LIMIT: Env.string('requests per client on the chat endpoints, such as 30/min, 5/s, 1000/h, or 0 for none', {
    default: '30/min',
    pattern: RATE_LIMIT_PATTERN,
  }),
  AVATAR_MOCK_TOKEN_DELAY: Env.duration('20ms'),
  AVATAR_SSE_HEARTBEAT: Env.duration('15s'),
}

type ChatEnv = Static<TObject<typeof chatEnvSchema>>

export function buildChatConfig(env: ChatEnv & { AVATAR_LLM_API_KEY?: string; AVATAR_LLM_BASE_URL?: string; AVATAR_LLM_MODEL?: string }) {
  return {
    llm: {
      apiKey: env.AVATAR_LLM_API_KEY,
      baseUrl: env.AVATAR_LLM_BASE_URL,
      model: env.AVATAR_LLM_MODEL ?? 'gpt-4o-mini',
      timeoutMs: parseDuration(env.AVATAR_LLM_TIMEOUT),
      maxRetries: env.AVATAR_LLM_MAX_RETRIES,
    },
    personas: loadPersonas({ file: env.AVATAR_CHARACTERS_FILE, systemPrompt: env.AVATAR_SYSTEM_PROMPT }),
    sessionTtlMs: parseDuration(env.AVATAR_SESSION_TTL),
    historyLimit: env.AVATAR_HISTORY_LIMIT,
    maxTextLength: env.AVATAR_MAX_TEXT_LENGTH,
    rateLimit: parseRateLimit(env.AVATAR_RATE_LIMIT),
    mockTokenDelayMs: parseDuration(env.AVATAR_MOCK_TOKEN_DELAY),
    sseHeartbeatMs: parseDuration(env.AVATAR_SSE_HEARTBEAT),
  }
}

export type ChatConfig = ReturnType<typeof buildChatConfig>
