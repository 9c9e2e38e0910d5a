/** An upload, already checked to be audio, with what music-metadata learnt of it. */
export interface TranscriptionRequest {
  audio: Buffer
  filename: string
  mimeType: string
  /** The container as music-metadata names it (`WAVE`, `MPEG`, `Ogg`, `EBML/webm`, …). */
  container: string
  /** ISO 639-1 code the caller asked for, if any. */
  language?: string
  signal?: AbortSignal
}

interface Transcription {
  text: string
  language: string
  /** Seconds of audio, when the provider measured it (after decoding). */
  duration?: number
}

export interface RecognitionStatus {
  provider: string
  available: boolean
  message: string
}

/** One utterance recognised while it is spoken (voice mode). */
export interface RecognitionStream {
  /** 16 kHz mono samples (−1…1), in order; decoded as they come. */
  push(samples: Float32Array): void
  /** The best guess so far, after all the audio pushed ('' before any word). */
  partial(): Promise<string>
  /** Ends the utterance: its transcript. */
  finish(): Promise<string>
  /** Drops the utterance (it made no turn, or the socket closed). */
  cancel(): void
}

/** The speech-recognition port; one file per implementation, plus a fake. */
export interface AsrProvider {
  readonly name: string
  status(): RecognitionStatus
  /** Throws TranscriptionError for a request the provider refuses, or fails on. */
  transcribe(request: TranscriptionRequest): Promise<Transcription>
  /**
   * Recognition as the person speaks, in `language`, when the provider can (else undefined, and
   * voice mode sends the whole utterance to `transcribe` at the end of the turn).
   */
  stream?(language: string | undefined): RecognitionStream | undefined
  /** Gets ready for `stream` (loads a model) ahead of the first utterance. */
  warm?(): void
}

/** `kind` decides the status: the caller's request (400), a format it cannot take (415), the provider (502). */
export class TranscriptionError extends Error {
  kind: 'unsupported_language' | 'unsupported_format' | 'provider_failed'
  constructor(kind: TranscriptionError['kind'], message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'TranscriptionError'
    this.kind = kind
  }
}

// Han ideographs: a transcript with any is Chinese.
const HAN = /[\u3400-\u4dbf\u4e00-\u9fff]/u

/** The language of a transcript when the provider does not say: only what its script shows. */
export function guessLanguage(text: string): string {
  if (HAN.test(text)) return 'zh'
  return 'en'
}
