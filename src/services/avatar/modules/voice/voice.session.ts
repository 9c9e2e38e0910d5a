import type { FastifyBaseLogger } from 'fastify'
import { INTERNAL_ERROR_DETAIL } from '../../errors.ts'
import { type AsrProvider, encodeWav16, type RecognitionStream } from '../../providers/asr/index.ts'
import { defaultVoiceFor, findVoice, SynthesisError, type TtsProvider, VOICES } from '../../providers/tts/index.ts'
import { type VisemeSpan, visemeTimeline } from '../speech/index.ts'
import { type AudioInput, createAudioInput, type Encoding, readAudioFormat } from './audio-input.ts'
import { SentenceSplitter } from './sentences.ts'
import { createSileroTurnDetector, type TurnDetector, type TurnDetectorOptions, VAD_SAMPLE_RATE } from './turn-detector.ts'

/** Bounds of what a client may set in `voice.start` (docs/avatar-protocol.md, "Voice mode"). */
const END_OF_TURN_MS = { min: 100, max: 3000, default: 500 }
const MIN_SPEECH_MS = { min: 100, max: 1000, default: 250 }
/** An utterance this long ends its turn without waiting for a pause: the audio a socket holds is bounded. */
const MAX_UTTERANCE_MS = 30_000
/**
 * Audio received but not yet analysed, in samples (10 s). A client may send faster than real
 * time (the detector reads it at many times that pace), but not without bound: past this, frames
 * are dropped, with one error, until the detector has caught up.
 */
const MAX_BACKLOG_SAMPLES = 10 * VAD_SAMPLE_RATE
/** The header of the WAV the providers write, to time a WAV whose provider gave no timing. */
const WAV_HEADER_BYTES = 44
/** Audio between two partial transcripts (a partial is read only when the previous one is back). */
const PARTIAL_EVERY_SAMPLES = 0.3 * VAD_SAMPLE_RATE
const SHUTDOWN_MESSAGE = 'The server is restarting; please send the message again.'

type Reply = { replyText: string; emotion: string; action: string }

/** The frames voice mode sends, beside the chat's own. */
export type VoiceEvent =
  | { type: 'voice.started'; sampleRate: number; encoding: Encoding; endOfTurnMs: number; minSpeechMs: number }
  | { type: 'voice.stopped' }
  | { type: 'vad'; speaking: boolean; atMs: number }
  | { type: 'transcript'; text: string; final: boolean }
  | { type: 'token'; content: string }
  | { type: 'audio'; index: number; text: string; format: 'wav'; durationMs: number; visemes: VisemeSpan[] | null; audio: string }
  | ({ type: 'done' } & Reply)
  | { type: 'interrupted'; replyText: string }
  | { type: 'error'; message: string }

type ReplyOutcome = { type: 'done'; reply: Reply } | { type: 'error'; message: string } | { type: 'aborted' }

/** What voice mode needs of the chat, which the chat module gives it (voice never imports chat). */
export interface VoiceChat {
  /** Counts one request against the client's budget: undefined when allowed, else the error sentence. */
  admit(): Promise<string | undefined>
  /**
   * Runs the chat turn of `userText` (the same as a typed one), streaming its tokens, and stores
   * nothing: `store` does, once the avatar has said the reply, or part of it (`said`).
   */
  stream(
    userText: string,
    meta: Record<string, unknown> | undefined,
    options: { signal: AbortSignal; onToken(content: string): Promise<void> },
  ): Promise<{ outcome: ReplyOutcome; store(said?: string): Promise<void> }>
}

export interface VoiceDeps {
  asr: AsrProvider
  tts: TtsProvider
  /** Aborted when the grace period of a stop ends: a reply still running ends with the retry error. */
  shutdownDeadline: AbortSignal
  /** The turn detector (tests may replace it; the default is Silero VAD). */
  detector?: (options: TurnDetectorOptions) => Promise<TurnDetector>
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

function reason(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'the provider failed'
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
  // The reply running or waiting its turn: aborted by barge-in.
  let current: AbortController | undefined
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

  function onTurn(audio: Float32Array, atMs: number) {
    const utterance = hearing
    hearing = undefined
    // Closing the socket ends the detector, which hands over the speech it held: no one to answer.
    if (host.gone.aborted) return utterance?.stream.cancel()
    void send({ type: 'vad', speaking: false, atMs })
    // The recogniser ends the utterance now, whatever the reply waits for (its decoder is free sooner).
    const heard = utterance?.stream.finish()
    heard?.catch(() => {})
    const controller = new AbortController()
    current = controller
    const turnSettings = settings
    host.schedule(async () => {
      try {
        if (turnSettings) await runReply(heard ?? audio, turnSettings, controller.signal)
      } catch (error) {
        // A bug, or the database failing to store the exchange: the socket and its next turns go on.
        host.log.error({ err: error }, 'voice turn failed')
        if (!host.gone.aborted) await send({ type: 'error', message: INTERNAL_ERROR_DETAIL })
      } finally {
        if (current === controller) current = undefined
      }
    })
  }

  /** The transcript of a turn: the recogniser's, already running, or the whole utterance sent to the provider. */
  async function recognise(heard: Promise<string> | Float32Array, language: string | undefined, signal: AbortSignal): Promise<string> {
    if (!(heard instanceof Float32Array)) return (await heard).trim()
    const result = await deps.asr.transcribe({
      audio: encodeWav16(heard, VAD_SAMPLE_RATE),
      filename: 'utterance.wav',
      mimeType: 'audio/wav',
      container: 'WAVE',
      language,
      signal,
    })
    return result.text.trim()
  }

  async function runReply(heard: Promise<string> | Float32Array, turn: Settings, interrupted: AbortSignal): Promise<void> {
    const started = performance.now()
    const timings: Record<string, number> = {}
    const mark = (name: string) => (timings[name] ??= Math.round(performance.now() - started))
    // Everything that stops the reply: barge-in, the socket closing, the end of a stop's grace, a synthesis failure.
    const halt = new AbortController()
    const signal = AbortSignal.any([interrupted, host.gone, deps.shutdownDeadline, halt.signal])
    // The sentences sent as audio: what the avatar has said.
    const said: string[] = []
    // Barge-in is told at once, whatever is still running (a synthesis, the model): the page
    // stops now, and no frame of this reply follows. What was said by then is what is stored.
    let spoken: string | undefined
    const emit = (event: VoiceEvent) => (spoken === undefined ? send(event) : Promise.resolve())
    const onInterrupted = () => {
      if (host.gone.aborted || spoken !== undefined) return
      spoken = said.join(' ')
      void send({ type: 'interrupted', replyText: spoken })
    }
    if (interrupted.aborted) onInterrupted()
    else interrupted.addEventListener('abort', onInterrupted, { once: true })
    let outcome = 'closed'
    try {
      outcome = await reply()
    } finally {
      interrupted.removeEventListener('abort', onInterrupted)
      host.log.info({ sessionId: host.sessionId, outcome, ms: timings, responseTime: performance.now() - started }, 'voice turn')
    }

    async function ending(store?: (said?: string) => Promise<void>): Promise<string> {
      if (host.gone.aborted) return 'closed'
      if (spoken !== undefined) {
        if (spoken && store) await store(spoken)
        return 'interrupted'
      }
      await emit({ type: 'error', message: SHUTDOWN_MESSAGE })
      return 'error'
    }

    async function reply(): Promise<string> {
      if (signal.aborted) return ending()
      let text: string
      try {
        text = await recognise(heard, turn.language, signal)
      } catch (error) {
        if (signal.aborted) return ending()
        host.log.warn({ err: error }, 'voice turn: recognition failed')
        await emit({ type: 'error', message: `Speech recognition failed: ${reason(error)}` })
        return 'error'
      }
      mark('recognised')
      if (signal.aborted) return ending()
      await emit({ type: 'transcript', text, final: true })
      if (!text) return 'empty'
      const denied = await host.chat.admit()
      if (denied) {
        await emit({ type: 'error', message: denied })
        return 'error'
      }

      const splitter = new SentenceSplitter()
      let voice = turn.voice === undefined ? undefined : findVoice(turn.voice)
      let speaking: Promise<void> = Promise.resolve()
      let synthesisFailed: string | undefined
      let sentences = 0
      const speak = (sentence: string) => {
        const index = sentences++
        speaking = speaking.then(() => synthesize(sentence, index))
      }

      async function synthesize(sentence: string, index: number) {
        if (signal.aborted) return
        voice ??= defaultVoiceFor(sentence)
        try {
          const stream = await deps.tts.synthesize({ text: sentence, voice, ratePercent: 0, format: 'wav', signal })
          const parts: Uint8Array[] = []
          for await (const chunk of stream.chunks) parts.push(chunk)
          const wav = Buffer.concat(parts)
          const timing = stream.timing ? await stream.timing : undefined
          if (signal.aborted) return
          const sampleRate = wav.length >= 28 ? wav.readUInt32LE(24) : 22_050
          const durationMs = Math.round(timing ? timing.durationMs : ((wav.length - WAV_HEADER_BYTES) / 2 / sampleRate) * 1000)
          if (spoken !== undefined) return
          mark('firstAudio')
          // Said once handed to the socket (which queues it at once), even if its write waits for a slow reader.
          said.push(sentence)
          await emit({ type: 'audio', index, text: sentence, format: 'wav', durationMs, visemes: timing ? visemeTimeline(timing) : null, audio: wav.toString('base64') })
        } catch (error) {
          if (signal.aborted) return
          synthesisFailed = error instanceof SynthesisError ? error.message : reason(error)
          host.log.warn({ err: error }, 'voice turn: synthesis failed')
          halt.abort(error)
        }
      }

      const turnOf = await host.chat.stream(text, turn.meta, {
        signal,
        onToken: async (content) => {
          if (signal.aborted) return
          mark('firstToken')
          await emit({ type: 'token', content })
          for (const sentence of splitter.push(content)) speak(sentence)
        },
      })
      const result = turnOf.outcome
      if (result.type === 'done' && !signal.aborted) for (const sentence of splitter.end()) speak(sentence)
      if (result.type === 'error') halt.abort(new Error(result.message))
      await speaking
      if (synthesisFailed !== undefined) {
        await emit({ type: 'error', message: `Speech synthesis failed: ${synthesisFailed}` })
        return 'error'
      }
      if (result.type === 'error') {
        await emit({ type: 'error', message: result.message })
        return 'error'
      }
      if (signal.aborted || result.type === 'aborted') return ending(turnOf.store)
      await turnOf.store()
      await emit({ type: 'done', ...result.reply })
      return 'done'
    }
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
        detector = await makeDetector({
          endOfTurnMs: read.endOfTurnMs,
          minSpeechMs: read.minSpeechMs,
          maxUtteranceMs: MAX_UTTERANCE_MS,
          onSpeech: (atMs) => {
            if (hearing) hearing.announced = true
            void send({ type: 'vad', speaking: true, atMs })
            // Barge-in: the person speaks over the avatar's reply, or over the one about to start.
            current?.abort(new Error('interrupted'))
          },
          onTurn,
          onUtteranceAudio,
          onDiscarded,
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
      current?.abort(new Error('client disconnected'))
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
