import { type Static, Type } from '@sinclair/typebox'
import { parseDuration } from '../../../../core/config/duration.ts'
import { Env } from '../../../../core/config/load-config.ts'

/** The environment variables of speech recognition (AVATAR_ASR_API_KEY/BASE_URL/MODEL are in config.ts). */
export const transcriptionEnvSchema = {
  AVATAR_ASR_PROVIDER: Env.enumOf(['auto', 'openai', 'pocketsphinx', 'none'] as const, 'auto'),
  AVATAR_ASR_TIMEOUT: Env.duration('60s'),
  AVATAR_ASR_POCKETSPHINX_COMMAND: Env.string('the pocketsphinx_continuous command (a name on PATH or a path)', { default: 'pocketsphinx_continuous' }),
  AVATAR_ASR_POCKETSPHINX_MODEL: Env.string('the directory of the pocketsphinx en-us model', { default: '/usr/share/pocketsphinx/model/en-us' }),
}

export const transcriptionEnvObject = Type.Object(transcriptionEnvSchema)
type TranscriptionEnv = Static<typeof transcriptionEnvObject> & { AVATAR_ASR_API_KEY?: string; AVATAR_ASR_BASE_URL?: string; AVATAR_ASR_MODEL: string }

export function buildTranscriptionConfig(env: TranscriptionEnv) {
  return {
    provider: env.AVATAR_ASR_PROVIDER,
    timeoutMs: parseDuration(env.AVATAR_ASR_TIMEOUT),
    openai: { apiKey: env.AVATAR_ASR_API_KEY, baseUrl: env.AVATAR_ASR_BASE_URL, model: env.AVATAR_ASR_MODEL },
    pocketsphinx: { command: env.AVATAR_ASR_POCKETSPHINX_COMMAND, modelDir: env.AVATAR_ASR_POCKETSPHINX_MODEL },
  }
}

export type TranscriptionConfig = ReturnType<typeof buildTranscriptionConfig>
