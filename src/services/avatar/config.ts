import { Type } from '@sinclair/typebox'
import { defineSection, Env } from '../../core/config/load-config.ts'
import { buildChatConfig, chatEnvSchema } from './modules/chat/chat.config.ts'
import { buildSpeechConfig, speechEnvSchema } from './modules/speech/speech.config.ts'
import { buildTranscriptionConfig, transcriptionEnvSchema } from './modules/transcription/transcription.config.ts'

export const avatarSection = defineSection(
  Type.Object({
    AVATAR_LLM_API_KEY: Env.optionalString('an API key of an OpenAI-compatible provider'),
    AVATAR_LLM_BASE_URL: Env.optionalString('an http(s) URL', { pattern: '^https?://.+' }),
    AVATAR_LLM_MODEL: Env.optionalString('a model name'),
    AVATAR_ASR_API_KEY: Env.optionalString('an API key of an OpenAI-compatible transcription provider'),
    AVATAR_ASR_BASE_URL: Env.optionalString('an http(s) URL', { pattern: '^https?://.+' }),
    AVATAR_ASR_MODEL: Env.string('a transcription model name', { default: 'whisper-1' }),
    ...chatEnvSchema,
    ...speechEnvSchema,
    ...transcriptionEnvSchema,
  }),
  (env) => ({
    llm: { apiKey: env.AVATAR_LLM_API_KEY, baseUrl: env.AVATAR_LLM_BASE_URL, model: env.AVATAR_LLM_MODEL },
    asr: { apiKey: env.AVATAR_ASR_API_KEY, baseUrl: env.AVATAR_ASR_BASE_URL, model: env.AVATAR_ASR_MODEL },
    chat: buildChatConfig(env),
    speech: buildSpeechConfig(env),
    transcription: buildTranscriptionConfig(env),
  }),
)

export type AvatarConfig = ReturnType<typeof avatarSection.build>
