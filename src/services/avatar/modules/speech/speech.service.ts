import { AppError } from '../../../../core/errors/app-error.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import { AUDIO_FORMATS, type AudioFormat, CONTENT_TYPES, defaultVoiceFor, findVoice, SynthesisError, type SynthesisStream, type TtsProvider, VOICES } from '../../providers/tts/index.ts'
import type { SpeechBody, VoicesResponse } from './speech.schemas.ts'
import { avatarError } from '../../errors.ts'
import { type AvatarMetrics, noAvatarMetrics } from '../../metrics.ts'

const MAX_TEXT_LENGTH = 5000
const RATE_PATTERN = /^[+-]\d{1,3}%$/
const MIN_RATE = -50
const MAX_RATE = 100

interface SpeechReply extends SynthesisStream {
  contentType: string
}

export interface SpeechService {
  voices(): Promise<VoicesResponse>
  synthesize(body: SpeechBody, signal?: AbortSignal): Promise<SpeechReply>
}

function invalid(message: string): AppError {
  return coreError('validation_failed', message)
}

function parseRate(rate: string): number {
  if (!RATE_PATTERN.test(rate)) throw invalid(`rate must be a signed percentage such as "+0%", "-20%" or "+50%" (got ${JSON.stringify(rate)})`)
  // `|| 0` folds "-0%" into 0.
  const value = Number.parseInt(rate, 10) || 0
  if (value < MIN_RATE || value > MAX_RATE) throw invalid(`rate must be between ${MIN_RATE}% and +${MAX_RATE}% (got ${rate})`)
  return value
}

function parseFormat(format: string): AudioFormat {
  const found = AUDIO_FORMATS.find((known) => known === format)
  if (!found) throw invalid(`format must be one of ${AUDIO_FORMATS.join(', ')} (got ${JSON.stringify(format)})`)
  return found
}

export function createSpeechService(deps: { provider: TtsProvider; metrics?: AvatarMetrics }): SpeechService {
  const metrics = deps.metrics ?? noAvatarMetrics
  return {
    async voices() {
      const status = await deps.provider.status()
      return {
        ...status,
        voices: VOICES.map(({ id, name, locale, gender }) => ({ id, name, locale, gender })),
      }
    },

    async synthesize(body, signal) {
      if (body.text.trim().length === 0) throw invalid('text must not be empty')
      if (body.text.length > MAX_TEXT_LENGTH) throw invalid(`text must be at most ${MAX_TEXT_LENGTH} characters (got ${body.text.length})`)
      const voice = body.voice === undefined ? defaultVoiceFor(body.text) : findVoice(body.voice)
      if (!voice) throw invalid(`Unknown voice ${JSON.stringify(body.voice)}; known voices: ${VOICES.map((known) => known.id).join(', ')}`)
      const ratePercent = parseRate(body.rate ?? '+0%')
      const format = parseFormat(body.format ?? 'mp3')
      const job = metrics.speechJob('tts')
      try {
        const stream = await deps.provider.synthesize({ text: body.text, voice, ratePercent, format, signal })
        return { ...stream, chunks: untilLastChunk(stream.chunks, job), contentType: CONTENT_TYPES[format] }
      } catch (error) {
        job.done('error')
        if (error instanceof AppError) throw error
        const reason = error instanceof SynthesisError ? error.message : 'the speech provider failed'
        throw avatarError('synthesis_failed', `Speech synthesis failed: ${reason}`, { cause: error })
      }
    },
  }
}

/** The audio as it is handed on; the job ends with its last chunk (or with the stream failing or being left). */
async function* untilLastChunk(chunks: AsyncIterable<Uint8Array>, job: { done(outcome: 'ok' | 'error'): void }): AsyncGenerator<Uint8Array> {
  let outcome: 'ok' | 'error' = 'error'
  try {
    yield* chunks
    outcome = 'ok'
  } finally {
    job.done(outcome)
  }
}
