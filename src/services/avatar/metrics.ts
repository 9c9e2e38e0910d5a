import type { MetricsRegistry } from '../../core/metrics/registry.ts'

type StreamTransport = 'sse' | 'websocket'
type SpeechKind = 'tts' | 'asr'

/** What the avatar records; its domain code calls these (nothing is collected when metrics are off). */
export interface AvatarMetrics {
  /** A stream opened; call the returned function once when it closes. */
  streamOpened(transport: StreamTransport): () => void
  /** Tokens sent to a client, from the model or from the mock. */
  tokensStreamed(source: 'model' | 'mock', count: number): void
  /** The model failed: before its first token (then the mock answers) or in the middle of a stream. */
  modelFailed(phase: 'before_first_token' | 'mid_stream'): void
  /** A speech job started; call `done` once with its outcome (and, for recognition, the audio's length). */
  speechJob(kind: SpeechKind): { done(outcome: 'ok' | 'error', audioSeconds?: number): void }
}

const SPEECH_SECONDS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const RTF_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5]

export function createAvatarMetrics(registry: MetricsRegistry, options: { ttsQueued?: () => number } = {}): AvatarMetrics {
  const streams = registry.gauge({ name: 'triad_avatar_open_streams', help: 'Chat streams open now, by transport (sse, websocket)', labelNames: ['transport'] })
  const tokens = registry.counter({ name: 'triad_avatar_tokens_streamed_total', help: 'Reply tokens sent to clients, by source (model, mock)', labelNames: ['source'] })
  const providerErrors = registry.counter({
    name: 'triad_avatar_provider_errors_total',
    help: 'Language-model failures, by phase (before_first_token: the mock answers instead; mid_stream: the reply ends with an error)',
    labelNames: ['phase'],
  })
  const fallbacks = registry.counter({ name: 'triad_avatar_mock_fallbacks_total', help: 'Replies the mock gave because the configured model failed before its first token' })
  const running = registry.gauge({ name: 'triad_avatar_speech_jobs_running', help: 'Speech jobs running now, by kind (tts, asr)', labelNames: ['kind'] })
  const ttsQueued = options.ttsQueued
  if (ttsQueued) {
    registry.gauge({
      name: 'triad_avatar_tts_segments_queued',
      help: 'Synthesis segments waiting for a worker thread of the local speech pool',
      read: ttsQueued,
    })
  }
  const jobs = registry.counter({ name: 'triad_avatar_speech_jobs_total', help: 'Speech jobs finished, by kind (tts, asr) and outcome (ok, error)', labelNames: ['kind', 'outcome'] })
  const jobSeconds = registry.histogram({
    name: 'triad_avatar_speech_job_duration_seconds',
    help: 'Time a speech job took, by kind (tts: until the last byte of audio was handed to the client)',
    labelNames: ['kind'],
    buckets: SPEECH_SECONDS_BUCKETS,
  })
  const realTimeFactor = registry.histogram({
    name: 'triad_avatar_asr_real_time_factor',
    help: 'Recognition time divided by the length of the audio recognised (below 1: faster than real time)',
    buckets: RTF_BUCKETS,
  })
  return {
    streamOpened(transport) {
      streams.inc({ transport })
      let open = true
      return () => {
        if (!open) return
        open = false
        streams.dec({ transport })
      }
    },
    tokensStreamed(source, count) {
      if (count > 0) tokens.inc({ source }, count)
    },
    modelFailed(phase) {
      providerErrors.inc({ phase })
      if (phase === 'before_first_token') fallbacks.inc()
    },
    speechJob(kind) {
      running.inc({ kind })
      const started = performance.now()
      let finished = false
      return {
        done(outcome, audioSeconds) {
          if (finished) return
          finished = true
          running.dec({ kind })
          const seconds = (performance.now() - started) / 1000
          jobs.inc({ kind, outcome })
          jobSeconds.observe({ kind }, seconds)
          if (kind === 'asr' && outcome === 'ok' && audioSeconds !== undefined && audioSeconds > 0) realTimeFactor.observe({}, seconds / audioSeconds)
        },
      }
    },
  }
}

export const noAvatarMetrics: AvatarMetrics = {
  streamOpened: () => () => {},
  tokensStreamed: () => {},
  modelFailed: () => {},
  speechJob: () => ({ done: () => {} }),
}
