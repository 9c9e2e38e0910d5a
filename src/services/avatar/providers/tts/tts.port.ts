import type { CatalogueVoice } from './voices.ts'

export const AUDIO_FORMATS = ['mp3', 'wav'] as const
export type AudioFormat = (typeof AUDIO_FORMATS)[number]

export const CONTENT_TYPES: Record<AudioFormat, string> = { mp3: 'audio/mpeg', wav: 'audio/wav' }

export interface SynthesisRequest {
  text: string
  voice: CatalogueVoice
  /** Speaking-rate change in percent, −50…+100 (0 is the voice's normal rate). */
  ratePercent: number
  format: AudioFormat
  /** Aborted when the client goes away: stop producing audio. */
  signal?: AbortSignal
}

/** A phoneme of the audio, where the synthesiser placed it. */
export interface TimedPhoneme {
  /** The synthesiser's name for it (IPA for espeak-ng); empty for a pause. */
  phoneme: string
  /** Milliseconds from the start of the audio. */
  startMs: number
}

/** What the synthesiser reported about the timing of the audio it produced. */
export interface SpeechTiming {
  /** The length of the audio produced (its PCM), in milliseconds. */
  durationMs: number
  /** The phonemes in order; each lasts until the next one starts (the last until `durationMs`). */
  phonemes: TimedPhoneme[]
}

/** Audio as it is produced, plus what is known about it before the first byte. */
export interface SynthesisStream {
  /** The provider that really produces this audio (after any fallback). */
  provider: string
  /** Total length in bytes when known before streaming (then sent as Content-Length). */
  length?: number
  chunks: AsyncIterable<Uint8Array>
  /**
   * The synthesiser's own phoneme timing of this audio, settled once the last chunk has been
   * read (rejected if the audio failed). Absent when the provider that spoke reports none.
   */
  timing?: Promise<SpeechTiming>
}

export interface ProviderStatus {
  /** The provider that synthesis really uses now. */
  provider: string
  available: boolean
  /** Why the configured provider is not the one in use, when it is not. */
  message?: string
}

/**
 * The speech-synthesis port. `synthesize` resolves once the first audio is ready (so a
 * failure before any byte can still become an HTTP error) and rejects with
 * SynthesisError when the provider cannot produce audio.
 */
export interface TtsProvider {
  readonly name: string
  status(): Promise<ProviderStatus>
  synthesize(request: SynthesisRequest): Promise<SynthesisStream>
  close(): Promise<void>
  /** Work waiting for a worker thread, for providers that have a pool (for metrics). */
  queued?(): number
  /** Settles once the provider is ready for its first request at full speed (engines loaded and warm). */
  ready?(): Promise<void>
}

export class SynthesisError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SynthesisError'
  }
}
