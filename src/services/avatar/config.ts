import { type Static, type TObject, Type } from '@sinclair/typebox'
import { parseDuration } from '../../core/config/duration.ts'
import { defineSection, Env, splitList } from '../../core/config/load-config.ts'
import { RATE_LIMIT_PATTERN, parseRateLimit } from '../../core/http/rate-limit.ts'
import { loadPersonas } from './personas.ts'

// The avatar's configuration section, one part per module. It lives here rather than in the
// modules so that reading the configuration does not load the service's code (src/services
// loads a service only when this instance serves it).

// ── chat ──

/** The environment variables of the conversation half of the avatar service. */
const chatEnvSchema = {
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
  AVATAR_OPERATOR_KEY: Env.optionalString(
    'at least 16 characters without spaces: the key operators send (Authorization: Bearer …) to POST /v1/session/{id}/say and /act; unset turns those routes off',
    { pattern: '^\\S{16,}$' },
  ),
  AVATAR_OPERATOR_RATE_LIMIT: Env.string('operator requests per client address, such as 60/min, or 0 for none', {
    default: '60/min',
    pattern: RATE_LIMIT_PATTERN,
  }),
  AVATAR_WS_HEARTBEAT: Env.duration('30s'),
}

type ChatEnv = Static<TObject<typeof chatEnvSchema>>

function buildChatConfig(env: ChatEnv & { AVATAR_LLM_API_KEY?: string; AVATAR_LLM_BASE_URL?: string; AVATAR_LLM_MODEL?: string }) {
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
    operator: { key: env.AVATAR_OPERATOR_KEY, rateLimit: parseRateLimit(env.AVATAR_OPERATOR_RATE_LIMIT) },
    wsHeartbeatMs: parseDuration(env.AVATAR_WS_HEARTBEAT),
  }
}

export type ChatConfig = ReturnType<typeof buildChatConfig>

// ── speech ──

/** Microsoft Edge's "read aloud" endpoint, which the edge provider speaks to. */
const EDGE_DEFAULT_URL = 'wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1'

/** The environment variables of speech synthesis. */
const speechEnvSchema = {
  AVATAR_TTS_PROVIDER: Env.enumOf(['espeak', 'edge'] as const, 'espeak'),
  AVATAR_TTS_THREADS: Env.integer('how many worker threads synthesise speech locally (0 = one per CPU core)', 0),
  AVATAR_TTS_WARM: Env.boolean(true),
  AVATAR_TTS_EDGE_URL: Env.string('a ws(s) URL of the Edge read-aloud endpoint', { default: EDGE_DEFAULT_URL, pattern: '^wss?://.+' }),
  AVATAR_TTS_EDGE_TIMEOUT: Env.duration('5s'),
  AVATAR_TTS_TIMELINE_TTL: Env.duration('10m'),
}

type SpeechEnv = Static<TObject<typeof speechEnvSchema>>

function buildSpeechConfig(env: SpeechEnv) {
  return {
    provider: env.AVATAR_TTS_PROVIDER,
    threads: env.AVATAR_TTS_THREADS,
    /** Start the local synthesis threads and warm them before the instance is ready. */
    warm: env.AVATAR_TTS_WARM,
    edge: { url: env.AVATAR_TTS_EDGE_URL, timeoutMs: parseDuration(env.AVATAR_TTS_EDGE_TIMEOUT) },
    timelineTtlMs: parseDuration(env.AVATAR_TTS_TIMELINE_TTL),
  }
}

export type SpeechConfig = ReturnType<typeof buildSpeechConfig>

// ── transcription ──

/** The environment variables of speech recognition (AVATAR_ASR_API_KEY/BASE_URL/MODEL are below). */
const transcriptionEnvSchema = {
  AVATAR_ASR_PROVIDER: Env.enumOf(['auto', 'openai', 'pocketsphinx', 'none'] as const, 'auto'),
  AVATAR_ASR_TIMEOUT: Env.duration('60s'),
  AVATAR_ASR_POCKETSPHINX_COMMAND: Env.string('the pocketsphinx_continuous command (a name on PATH or a path)', { default: 'pocketsphinx_continuous' }),
  AVATAR_ASR_POCKETSPHINX_MODEL: Env.string('the directory of the pocketsphinx en-us model', { default: '/usr/share/pocketsphinx/model/en-us' }),
  AVATAR_ASR_POCKETSPHINX_STREAMING: Env.boolean(true),
  AVATAR_VOICE_PREEMPTIVE: Env.boolean(true),
}

type TranscriptionEnv = Static<TObject<typeof transcriptionEnvSchema>> & { AVATAR_ASR_API_KEY?: string; AVATAR_ASR_BASE_URL?: string; AVATAR_ASR_MODEL: string }

function buildTranscriptionConfig(env: TranscriptionEnv) {
  return {
    provider: env.AVATAR_ASR_PROVIDER,
    timeoutMs: parseDuration(env.AVATAR_ASR_TIMEOUT),
    openai: { apiKey: env.AVATAR_ASR_API_KEY, baseUrl: env.AVATAR_ASR_BASE_URL, model: env.AVATAR_ASR_MODEL },
    pocketsphinx: { command: env.AVATAR_ASR_POCKETSPHINX_COMMAND, modelDir: env.AVATAR_ASR_POCKETSPHINX_MODEL, streaming: env.AVATAR_ASR_POCKETSPHINX_STREAMING },
    /** Voice mode starts the reply at the person's pause (docs/avatar-protocol.md, "Preemptive replies"). */
    preemptive: env.AVATAR_VOICE_PREEMPTIVE,
  }
}

export type TranscriptionConfig = ReturnType<typeof buildTranscriptionConfig>

// ── cross-origin use ──

const ORIGIN = '(\\*|[A-Za-z][A-Za-z0-9+.-]*://[^\\s,/]+)'

// ── the section ──

export const avatarSection = defineSection(
  Type.Object({
    AVATAR_LLM_API_KEY: Env.optionalString('an API key of an OpenAI-compatible provider'),
    AVATAR_LLM_BASE_URL: Env.optionalString('an http(s) URL', { pattern: '^https?://.+' }),
    AVATAR_LLM_MODEL: Env.optionalString('a model name'),
    AVATAR_ASR_API_KEY: Env.optionalString('an API key of an OpenAI-compatible transcription provider'),
    AVATAR_ASR_BASE_URL: Env.optionalString('an http(s) URL', { pattern: '^https?://.+' }),
    AVATAR_ASR_MODEL: Env.string('a transcription model name', { default: 'whisper-1' }),
    AVATAR_CORS_ORIGINS: Env.string('* (any origin), or a comma-separated list of origins (https://app.example.org) whose pages may call the avatar API', {
      default: '*',
      pattern: `^\\s*${ORIGIN}\\s*(,\\s*${ORIGIN}\\s*)*$`,
    }),
    ...chatEnvSchema,
    ...speechEnvSchema,
    ...transcriptionEnvSchema,
  }),
  (env) => ({
    llm: { apiKey: env.AVATAR_LLM_API_KEY, baseUrl: env.AVATAR_LLM_BASE_URL, model: env.AVATAR_LLM_MODEL },
    asr: { apiKey: env.AVATAR_ASR_API_KEY, baseUrl: env.AVATAR_ASR_BASE_URL, model: env.AVATAR_ASR_MODEL },
    corsOrigins: splitList(env.AVATAR_CORS_ORIGINS),
    chat: buildChatConfig(env),
    speech: buildSpeechConfig(env),
    transcription: buildTranscriptionConfig(env),
  }),
)

export type AvatarConfig = ReturnType<typeof avatarSection.build>
