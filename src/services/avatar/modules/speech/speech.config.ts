import { type Static, Type } from '@sinclair/typebox'
import { parseDuration } from '../../../../core/config/duration.ts'
import { Env } from '../../../../core/config/load-config.ts'

/** Microsoft Edge's "read aloud" endpoint, which the edge provider speaks to. */
export const EDGE_DEFAULT_URL = 'wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1'

/** The environment variables of speech synthesis. */
export const speechEnvSchema = {
  AVATAR_TTS_PROVIDER: Env.enumOf(['espeak', 'edge'] as const, 'espeak'),
  AVATAR_TTS_THREADS: Env.integer('how many worker threads synthesise speech locally (0 = one per CPU core)', 0),
  AVATAR_TTS_EDGE_URL: Env.string('a ws(s) URL of the Edge read-aloud endpoint', { default: EDGE_DEFAULT_URL, pattern: '^wss?://.+' }),
  AVATAR_TTS_EDGE_TIMEOUT: Env.duration('5s'),
}

export const speechEnvObject = Type.Object(speechEnvSchema)
type SpeechEnv = Static<typeof speechEnvObject>

export function buildSpeechConfig(env: SpeechEnv) {
  return {
    provider: env.AVATAR_TTS_PROVIDER,
    threads: env.AVATAR_TTS_THREADS,
    edge: { url: env.AVATAR_TTS_EDGE_URL, timeoutMs: parseDuration(env.AVATAR_TTS_EDGE_TIMEOUT) },
  }
}

export type SpeechConfig = ReturnType<typeof buildSpeechConfig>
