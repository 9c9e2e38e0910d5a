import type { FastifyBaseLogger } from 'fastify'
import { INTERNAL_ERROR_DETAIL } from '../../errors.ts'
import type { AsrProvider, RecognitionStream } from '../../providers/asr/index.ts'
import { findVoice, type TtsProvider, VOICES } from '../../providers/tts/index.ts'
import { type AudioInput, createAudioInput, type Encoding, readAudioFormat } from './audio-input.ts'
import { createReplyTurn, type ReplyTurn, type VoiceChat, type VoiceEvent } from './voice.reply.ts'
import { createSileroTurnDetector, type TurnDetector, type TurnDetectorOptions, VAD_SAMPLE_RATE } from './turn-detector.ts'

/** Bounds of what a client may set in `voice.start` (docs/avatar-protocol.md, "Voice mode"). */
const END_OF_TURN_MS = { min: 100, max: 3000, default: 500 }
const MIN_SPEECH_MS = { min: 100, max: 1000, default: 250 }
/** An utterance this long ends its turn without waiting for a pause: the audio a socket holds is bounded. */
const MAX_UTTERANCE_MS = 30_000
/**
 * A preemptive reply starts this long before the end-of-turn silence is over: time enough to
 * recognise, ask the model and synthesise a first sentence (about 50 ms with the mock on an idle
 * core), while a shorter pause inside a sentence asks the model nothing.
 */
const PREEMPT_LEAD_MS = 150
/**
 * Audio received but not yet analysed, in samples (10 s). A client may send faster than real
 * time (the detector reads it at many times that pace), but not without bound: past this, frames
 * are dropped, with one error, until the detector has caught up.
 */
const MAX_BACKLOG_SAMPLES = 10 * VAD_SAMPLE_RATE
/** Audio between two partial transcripts (a partial is read only when the previous one is back). */
const PARTIAL_EVERY_SAMPLES = 0.3 * VAD_SAMPLE_RATE

export type { VoiceChat, VoiceEvent } from './voice.reply.ts'

export interface VoiceDeps {
  asr: AsrProvider
  tts: TtsProvider
  /** Aborted when the grace period of a stop ends: a reply still running ends with the retry error. */
  shutdownDeadline: AbortSignal
  /** The turn detector (tests may replace it; the default is Silero VAD). */
  detector?: (options: TurnDetectorOptions) => Promise<TurnDetector>
  /**
   * Starts the reply when the person pauses, before the end-of-turn silence is over, and sends
   * it the moment the turn ends if the transcript is the same (AVATAR_VOICE_PREEMPTIVE).
   */
  preemptive: boolean
}

export interface VoiceHost {
  log: FastifyBaseLogger
  sessionId: string
  chat: VoiceChat
  send(event: VoiceEvent): Promise<void>
  /** Runs a reply in the socket's order: after a typed turn that is running, before the next one. */
  schedule(run: () => Promise<void>): void
  /** Aborted when the socket closes. */
  gone: AbortSignal
}

interface Settings {
  encoding: Encoding
  endOfTurnMs: number
  minSpeechMs: number
  language?: string
  voice?: string
  meta?: Record<string, unknown>
}

export interface VoiceSession {
  /** A `voice.*` frame. */
  command(frame: { type: string } & Record<string, unknown>): void
  /** A binary frame: microphone audio. */
  audio(data: Buffer): void
  close(): void
}

function boundedInteger(frame: Record<string, unknown>, name: string, bounds: { min: number; max: number; default: number }): number | string {
  const value = frame[name]
  if (value === undefined) return bounds.default
  if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    return `${name} must be an integer from ${bounds.min} to ${bounds.max}`
  }
  return value
}

/** Reads `voice.start` into settings, or the sentence of its error frame. */
function readStart(frame: Record<string, unknown>): Settings | string {
  const format = readAudioFormat(frame)
  if (typeof format === 'string') return format
  const endOfTurnMs = boundedInteger(frame, 'endOfTurnMs', END_OF_TURN_MS)
  if (typeof endOfTurnMs === 'string') return endOfTurnMs
  const minSpeechMs = boundedInteger(frame, 'minSpeechMs', MIN_SPEECH_MS)
  if (typeof minSpeechMs === 'string') return minSpeechMs
  const { language, voice, meta } = frame
  if (language !== undefined && (typeof language !== 'string' || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(language))) {
    return 'language must be a language code such as "en" or "zh"'
  }
  if (voice !== undefined && (typeof voice !== 'string' || !findVoice(voice))) {
    return `Unknown voice ${JSON.stringify(voice)}; known voices: ${VOICES.map((known) => known.id).join(', ')}`
  }
  if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) return 'meta must be a JSON object'
  return { ...format, endOfTurnMs, minSpeechMs, language: language?.toLowerCase(), voice, meta: meta as Record<string, unknown> | undefined }
}

/**
 * Voice mode of one socket: the microphone's audio goes through the turn detector; at each end
 * of turn the utterance is recognised, the chat turn runs, and each sentence of the reply is
 * synthesised and sent as soon as the model has written it. Speech heard while a reply runs
 * stops it (barge-in).
 */
export function createVoiceSession(deps: VoiceDeps, host: VoiceHost): VoiceSession {
  const makeDetector = deps.detector ?? createSileroTurnDetector
  let on = false
  let settings: Settings | undefined
  let detector: TurnDetector | undefined
  // The decoder of the microphone's frames, one per voice.start.
  let input: AudioInput | undefined
  // Detector work (starting, audio, stopping) runs in arrival order, one step at a time.
  let steps: Promise<void> = Promise.resolve()
  let toldOff = false
  let backlog = 0
  let toldBacklog = false
  // The reply running or waiting its turn, until the page has played it: paused, resumed and
  // interrupted by speech over it.
  let current: ReplyTurn | undefined
  // The reply started at a pause of the utterance in progress, not yet confirmed by the end of the turn.
  let preempted: ReplyTurn | undefined
  // A preemptive reply scheduled but not yet running (a typed turn holds the socket's queue): while
  // it waits, another pause starts none (it would only wait too, and each holds a place in the queue).
  let queuedGuess: ReplyTurn | undefined
  // The utterance in progress, recognised as it is spoken (when the recogniser can).
  let hearing: { stream: RecognitionStream; sinceRead: number; reading: boolean; told: string; announced: boolean } | undefined

  const send = (event: VoiceEvent) => host.send(event)
  const step = (work: () => Promise<void>) => {
    steps = steps.then(work).catch((error: unknown) => host.log.error({ err: error }, 'voice step failed'))
  }

  function onUtteranceAudio(samples: Float32Array) {
    if (!hearing) {
      const stream = deps.asr.stream?.(settings?.language)
      if (!stream) return
      hearing = { stream, sinceRead: 0, reading: false, told: '', announced: false }
    }
    const utterance = hearing
    utterance.stream.push(samples)
    utterance.sinceRead += samples.length
    // Partials once the turn is announced (speech, not a click), one at a time.
    if (!utterance.announced || utterance.reading || utterance.sinceRead < PARTIAL_EVERY_SAMPLES) return
    utterance.reading = true
    utterance.sinceRead = 0
    utterance.stream.partial().then(
      (text) => {
        utterance.reading = false
        if (hearing !== utterance || !text || text === utterance.told || host.gone.aborted) return
        utterance.told = text
        void send({ type: 'transcript', text, final: false })
      },
      () => (utterance.reading = false),
    )
  }

  function onDiscarded() {
    hearing?.stream.cancel()
    hearing = undefined
  }

  const replyContext = {
    log: host.log,
    sessionId: host.sessionId,
    chat: host.chat,
    asr: deps.asr,
    tts: deps.tts,
    send,
    gone: host.gone,
    shutdownDeadline: deps.shutdownDeadline,
  }

  /** Runs the reply in the socket's order; `confirmed` ones are the current reply at once. */
  function schedule(turn: ReplyTurn, confirmed: boolean) {
    if (confirmed) current = turn
    else queuedGuess = turn
    host.schedule(async () => {
      if (queuedGuess === turn) queuedGuess = undefined
      try {
        await turn.run()
      } catch (error) {
        // A bug, or the database failing to store the exchange: the socket and its next turns go on.
        host.log.error({ err: error }, 'voice turn failed')
        if (!host.gone.aborted) await send({ type: 'error', message: INTERNAL_ERROR_DETAIL })
      } finally {
        if (current === turn) current = undefined
      }
    })
  }

  /** The person paused: the reply to what was heard so far starts now, its frames held until the turn ends. */
  function onPause() {
    const utterance = hearing
    if (!deps.preemptive || preempted || queuedGuess || !utterance || !settings) return
    preempted = createReplyTurn(replyContext, { heard: utterance.stream.partial(), settings, preemptive: true })
    schedule(preempted, false)
  }

  function onSpeechResumed() {
    preempted?.discard()
    preempted = undefined
  }

  function onTurn(audio: Float32Array, atMs: number) {
    const utterance = hearing
    hearing = undefined
    const guess = preempted
    preempted = undefined
    // Closing the socket ends the detector, which hands over the speech it held: no one to answer.
    if (host.gone.aborted) {
      guess?.discard()
      return utterance?.stream.cancel()
    }
    void send({ type: 'vad', speaking: false, atMs })
    // The recogniser ends the utterance now, whatever the reply waits for (its decoder is free sooner).
    const heard = utterance?.stream.finish()
    heard?.catch(() => {})
    if (!settings) return
    if (guess && heard) {
      return void settle(guess, heard, settings).catch((error: unknown) => {
        // A bug, or the budget's store failing: the guess goes, and the turn with it.
        guess.discard()
        host.log.error({ err: error }, 'voice turn failed')
        if (!host.gone.aborted) void send({ type: 'error', message: INTERNAL_ERROR_DETAIL })
      })
    }
    guess?.discard()
    schedule(createReplyTurn(replyContext, { heard: heard ?? audio, settings }), true)
  }

  /**
   * The turn ended with a preemptive reply running: it is the reply if it answers the transcript
   * the recogniser gives now (and the budget allows a turn); else it goes, unseen, and the turn
   * gets its own.
   */
  async function settle(guess: ReplyTurn, heard: Promise<string>, turnSettings: Settings) {
    current = guess
    const [text, guessed] = await Promise.all([heard.then((said) => said.trim(), () => undefined), guess.transcript.catch(() => undefined)])
    // Spoken over meanwhile: the turn ended with `interrupted`, as a reply not yet started does.
    if (guess.interrupted) return guess.discard()
    if (text !== undefined && text === guessed) {
      const denied = text ? await host.chat.admit() : undefined
      if (!denied) return guess.confirm()
      guess.discard()
      return host.schedule(async () => {
        await send({ type: 'transcript', text, final: true })
        await send({ type: 'error', message: denied })
      })
    }
    guess.discard()
    // A sound that paused the guess, not yet told apart from speech, holds this reply as well.
    schedule(createReplyTurn(replyContext, { heard, settings: turnSettings, pausedAt: guess.pausedAt }), true)
  }

  function start(frame: Record<string, unknown>) {
    if (on) return void send({ type: 'error', message: 'Voice mode is already on; send voice.stop first' })
    const read = readStart(frame)
    if (typeof read === 'string') return void send({ type: 'error', message: read })
    const status = deps.asr.status()
    if (!status.available) return void send({ type: 'error', message: status.message })
    // On at once, so that audio sent right behind voice.start is kept (it waits for the detector).
    on = true
    toldOff = false
    settings = read
    const decoder = (input = createAudioInput(read.encoding))
    deps.asr.warm?.()
    step(async () => {
      const denied = await host.chat.admit()
      if (denied) {
        on = false
        decoder.close()
        return void (await send({ type: 'error', message: denied }))
      }
      try {
        await decoder.ready
      } catch (error) {
        on = false
        decoder.close()
        host.log.error({ err: error }, 'the Opus decoder could not start')
        return void (await send({ type: 'error', message: 'The Opus decoder could not start on this instance; send 16-bit PCM ("encoding":"pcm16")' }))
      }
      try {
        detector = await makeDetector({
          endOfTurnMs: read.endOfTurnMs,
          pauseMs: Math.max(0, read.endOfTurnMs - PREEMPT_LEAD_MS),
          minSpeechMs: read.minSpeechMs,
          maxUtteranceMs: MAX_UTTERANCE_MS,
          // Maybe someone speaking over the avatar: the page stops playing until it is known.
          onSpeechStart: (atMs) => current?.pause(atMs),
          onSpeech: (atMs) => {
            if (hearing) hearing.announced = true
            void send({ type: 'vad', speaking: true, atMs })
            // Barge-in: the person speaks over the avatar's reply, or over the one about to start.
            current?.interrupt()
          },
          onPause,
          onSpeechResumed,
          onTurn,
          onUtteranceAudio,
          onDiscarded: () => {
            onDiscarded()
            // Too short for speech (a cough, a knock): the avatar goes on.
            current?.resume()
          },
          onSilence: (atMs) => void send({ type: 'vad', speaking: false, atMs }),
        })
      } catch (error) {
        on = false
        decoder.close()
        host.log.error({ err: error }, 'voice activity detection could not start')
        return void (await send({ type: 'error', message: 'Voice activity detection could not start on this instance' }))
      }
      await send({ type: 'voice.started', sampleRate: VAD_SAMPLE_RATE, encoding: read.encoding, endOfTurnMs: read.endOfTurnMs, minSpeechMs: read.minSpeechMs })
    })
  }

  function stop() {
    if (!on) return void send({ type: 'error', message: 'Voice mode is not on' })
    on = false
    const decoder = input
    step(async () => {
      const ending = detector
      detector = undefined
      decoder?.close()
      // Speech in progress makes its turn now (push-to-talk released).
      await ending?.end()
      await ending?.close()
      await send({ type: 'voice.stopped' })
    })
  }

  return {
    command(frame) {
      if (frame.type === 'voice.start') return start(frame)
      if (frame.type === 'voice.stop') return stop()
      void send({ type: 'error', message: `Unknown message type: ${frame.type.slice(0, 40)}` })
    },

    audio(data) {
      if (!on) {
        if (!toldOff) void send({ type: 'error', message: 'Audio frames need voice mode: send {"type":"voice.start","sampleRate":16000} first' })
        toldOff = true
        return
      }
      const decoder = input
      if (!decoder) return
      const length = decoder.measure(data)
      if (typeof length !== 'number') return void (length && send({ type: 'error', message: length }))
      if (backlog + length > MAX_BACKLOG_SAMPLES) {
        if (!toldBacklog) void send({ type: 'error', message: 'Audio is arriving faster than it can be analysed; frames are being dropped' })
        toldBacklog = true
        return
      }
      toldBacklog = false
      backlog += length
      step(async () => {
        try {
          const samples = decoder.decode(data)
          if (typeof samples === 'string') await send({ type: 'error', message: samples })
          else if (samples) await detector?.push(samples)
        } finally {
          backlog -= length
        }
      })
    },

    close() {
      on = false
      preempted?.discard()
      preempted = undefined
      const decoder = input
      step(async () => {
        decoder?.close()
        const ending = detector
        detector = undefined
        await ending?.close()
      })
    },
  }
}
