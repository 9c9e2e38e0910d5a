import type { Clock } from '../../../../core/clock.ts'
import { AppError } from '../../../../core/errors/app-error.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { AUDIO_FORMATS, type AudioFormat, CONTENT_TYPES, defaultVoiceFor, findVoice, SynthesisError, type SynthesisStream, type TtsProvider, VOICES } from '../../providers/tts/index.ts'
import type { SpeechBody, SpeechJson, TimelineResponse, VoicesResponse } from './speech.schemas.ts'
import type { SpeechRepository } from './speech.repository.ts'
import { avatarError } from '../../errors.ts'
import { type AvatarMetrics, noAvatarMetrics } from '../../metrics.ts'
import { type VisemeSpan, visemeTimeline } from './visemes.ts'

const MAX_TEXT_LENGTH = 5000
const RATE_PATTERN = /^[+-]\d{1,3}%$/
const MIN_RATE = -50
const MAX_RATE = 100
/** How often (at most) one instance deletes expired timelines. */
const SWEEP_INTERVAL_MS = 60_000

/** Why a provider's audio has no viseme timeline, by provider. */
const NO_TIMING: Record<string, string> = {
  edge:
    "the online Edge voices report word boundaries at most (their read-aloud service sends no phonemes or visemes), and a mouth shape cannot be read from a word's time without guessing from its text; the local espeak voices (AVATAR_TTS_PROVIDER=espeak) give visemes",
}

interface SpeechReply extends SynthesisStream {
  contentType: string
  /** The id under which this audio's viseme timeline is kept, stored before the audio's last chunk. */
  synthesisId: string
}

export interface SpeechService {
  voices(): Promise<VoicesResponse>
  /**
   * The audio as it is made; its timeline is stored under `synthesisId` before the last chunk
   * is handed on. When it cannot be, the chunks end in a 503 instead of the last one.
   */
  synthesize(body: SpeechBody, signal?: AbortSignal): Promise<SpeechReply>
  /** The whole audio (base64) with its viseme timeline, in one JSON body. */
  synthesizeJson(body: SpeechBody, signal?: AbortSignal): Promise<SpeechJson>
  /** The stored timeline of a recent synthesis. */
  timeline(synthesisId: string): Promise<TimelineResponse>
}

export interface SpeechServiceDeps {
  provider: TtsProvider
  repository: SpeechRepository
  clock: Clock
  ids: IdGenerator
  /** How long a synthesis's timeline is kept (AVATAR_TTS_TIMELINE_TTL). */
  timelineTtlMs: number
  metrics?: AvatarMetrics
  /** Told when expired timelines could not be deleted. */
  onSweepError?: (error: unknown) => void
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

/** What is kept of a synthesis: its viseme timeline, or null when its provider gave no timing. */
interface Kept {
  provider: string
  durationMs: number | null
  visemes: VisemeSpan[] | null
}

export function createSpeechService(deps: SpeechServiceDeps): SpeechService {
  const metrics = deps.metrics ?? noAvatarMetrics
  const { repository, clock } = deps
  let lastSweep = Number.NEGATIVE_INFINITY

  /** Computes the timeline of a finished audio and stores it for AVATAR_TTS_TIMELINE_TTL. */
  async function keep(synthesisId: string, stream: SynthesisStream): Promise<Kept> {
    const timing = stream.timing ? await stream.timing : undefined
    const kept: Kept = {
      provider: stream.provider,
      durationMs: timing ? Math.round(timing.durationMs) : null,
      visemes: timing ? visemeTimeline(timing) : null,
    }
    const now = clock.now()
    try {
      await repository.insert({
        id: synthesisId,
        provider: kept.provider,
        duration_ms: kept.durationMs,
        visemes: kept.visemes ? JSON.stringify(kept.visemes) : null,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + deps.timelineTtlMs).toISOString(),
      })
    } catch (error) {
      throw coreError('service_unavailable', `The viseme timeline of synthesis ${synthesisId} could not be stored; try again`, { headers: { 'retry-after': '1' }, cause: error })
    }
    if (now.getTime() - lastSweep >= SWEEP_INTERVAL_MS) {
      lastSweep = now.getTime()
      await repository.deleteExpired(now.toISOString()).catch((error: unknown) => deps.onSweepError?.(error))
    }
    return kept
  }

  async function start(body: SpeechBody, signal: AbortSignal | undefined) {
    if (body.text.trim().length === 0) throw invalid('text must not be empty')
    if (body.text.length > MAX_TEXT_LENGTH) throw invalid(`text must be at most ${MAX_TEXT_LENGTH} characters (got ${body.text.length})`)
    const voice = body.voice === undefined ? defaultVoiceFor(body.text) : findVoice(body.voice)
    if (!voice) throw invalid(`Unknown voice ${JSON.stringify(body.voice)}; known voices: ${VOICES.map((known) => known.id).join(', ')}`)
    const ratePercent = parseRate(body.rate ?? '+0%')
    const format = parseFormat(body.format ?? 'mp3')
    const job = metrics.speechJob('tts')
    try {
      const stream = await deps.provider.synthesize({ text: body.text, voice, ratePercent, format, signal })
      const synthesisId = deps.ids.prefixed('syn')
      let kept: Promise<Kept> | undefined
      const keepOnce = () => (kept ??= keep(synthesisId, stream))
      return { stream, synthesisId, format, keepOnce, chunks: untilLastChunk(stream.chunks, job, keepOnce) }
    } catch (error) {
      job.done('error')
      if (error instanceof AppError) throw error
      const reason = error instanceof SynthesisError ? error.message : 'the speech provider failed'
      throw avatarError('synthesis_failed', `Speech synthesis failed: ${reason}`, { cause: error })
    }
  }

  return {
    async voices() {
      const status = await deps.provider.status()
      return {
        ...status,
        voices: VOICES.map(({ id, name, locale, gender }) => ({ id, name, locale, gender })),
      }
    },

    async synthesize(body, signal) {
      const { stream, synthesisId, format, chunks } = await start(body, signal)
      return { ...stream, chunks, synthesisId, contentType: CONTENT_TYPES[format] }
    },

    async synthesizeJson(body, signal) {
      const { synthesisId, format, chunks, keepOnce } = await start(body, signal)
      const parts: Uint8Array[] = []
      try {
        for await (const chunk of chunks) parts.push(chunk)
      } catch (error) {
        // The timeline could not be stored: its own answer.
        if (error instanceof AppError) throw error
        // Nothing has been sent yet: a failure mid-synthesis is still an HTTP error here.
        throw avatarError('synthesis_failed', `Speech synthesis failed: ${error instanceof SynthesisError ? error.message : 'the speech provider failed'}`, { cause: error })
      }
      const kept = await keepOnce()
      return {
        synthesis_id: synthesisId,
        provider: kept.provider,
        format,
        content_type: CONTENT_TYPES[format],
        duration_ms: kept.durationMs,
        audio: Buffer.concat(parts).toString('base64'),
        visemes: kept.visemes,
        ...(kept.visemes ? {} : { visemes_unavailable: NO_TIMING[kept.provider] ?? `the ${kept.provider} provider reports no phoneme timing` }),
      }
    },

    async timeline(synthesisId) {
      const row = await repository.find(synthesisId, clock.now().toISOString())
      if (!row) throw avatarError('synthesis_not_found', `No synthesis ${synthesisId} in the last ${Math.round(deps.timelineTtlMs / 1000)} seconds`)
      if (row.visemes === null) {
        const reason = NO_TIMING[row.provider] ?? `the ${row.provider} provider reports no phoneme timing`
        throw avatarError('visemes_unavailable', `Synthesis ${synthesisId} has no viseme timeline: it was spoken by ${row.provider}, and ${reason}`)
      }
      return { synthesis_id: row.id, provider: row.provider, duration_ms: Number(row.duration_ms), visemes: JSON.parse(row.visemes) as VisemeSpan[] }
    },
  }
}

/**
 * The audio as it is handed on, one chunk behind: the last chunk is held until `after` (storing
 * the timeline) has finished, so that the answer's last byte, the one that completes a WAV
 * answer of known Content-Length as much as a chunked MP3 one, leaves only once the timeline
 * is committed, and a client whose answer is complete finds the timeline on any instance. If
 * `after` fails, the chunks end with its error instead of the last one: an answer already
 * under way is cut short (never complete with an `X-Synthesis-Id` that names nothing), one not
 * yet begun becomes that error. The job ends with the synthesis (or with it failing or being left).
 */
async function* untilLastChunk(chunks: AsyncIterable<Uint8Array>, job: { done(outcome: 'ok' | 'error'): void }, after: () => Promise<unknown>): AsyncGenerator<Uint8Array> {
  let outcome: 'ok' | 'error' = 'error'
  let held: Uint8Array | undefined
  try {
    for await (const chunk of chunks) {
      if (held !== undefined) yield held
      held = chunk
    }
    outcome = 'ok'
  } finally {
    job.done(outcome)
  }
  await after()
  if (held !== undefined) yield held
}
