import type { FastifyBaseLogger } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import { type AsrProvider, encodeWav16 } from '../../providers/asr/index.ts'
import { defaultVoiceFor, findVoice, SynthesisError, type TtsProvider } from '../../providers/tts/index.ts'
import { type VisemeSpan, visemeTimeline } from '../speech/index.ts'
import type { Encoding } from './audio-input.ts'
import { createReplyOutlet } from './reply-outlet.ts'
import { SentenceSplitter } from './sentences.ts'
import { VAD_SAMPLE_RATE } from './turn-detector.ts'

/** The header of the WAV the providers write, to time a WAV whose provider gave no timing. */
const WAV_HEADER_BYTES = 44
const SHUTDOWN_MESSAGE = 'The server is restarting; please send the message again.'
/** How long after its arrival a page starts a sentence that finds nothing playing (voice-playback.js LEAD_SECONDS). */
const PLAYBACK_LEAD_MS = 20

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
  | { type: 'paused'; atMs: number }
  | { type: 'resumed' }
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

export interface ReplySettings {
  language?: string
  voice?: string
  meta?: Record<string, unknown>
}

export interface ReplyContext {
  log: FastifyBaseLogger
  sessionId: string
  chat: VoiceChat
  asr: AsrProvider
  tts: TtsProvider
  send(event: VoiceEvent): Promise<void>
  /** Aborted when the socket closes. */
  gone: AbortSignal
  /** Aborted when the grace period of a stop ends. */
  shutdownDeadline: AbortSignal
}

/**
 * The reply to one spoken turn: recognition (or the transcript already read), the chat turn, and
 * each sentence synthesised and sent as soon as the model has written it.
 *
 * A preemptive reply starts before the turn has ended (the person has paused; docs/avatar-protocol.md,
 * "Preemptive replies"): it runs with its frames held back, and is either confirmed (the turn ended
 * with the transcript it answers: its frames go out at once) or discarded without a trace.
 */
export interface ReplyTurn {
  /** What the reply answers (for a preemptive reply, the transcript guessed at the pause). */
  readonly transcript: Promise<string>
  /** Where the sound that paused it began, while it is paused. */
  readonly pausedAt: number | undefined
  /** Spoken over (barge-in). */
  readonly interrupted: boolean
  /** Runs the reply; scheduled in the socket's order. */
  run(): Promise<void>
  /** The turn ended with this reply's transcript: its frames go out. */
  confirm(): void
  /** Not the turn after all (the person spoke on, or was heard differently): stops, sends nothing, stores nothing. */
  discard(): void
  /** Someone may be speaking over the reply: the page is told to stop playing, and nothing more is sent for now. */
  pause(atMs: number): void
  /** It was not speech: the page plays on, and the held frames follow. */
  resume(): void
  /** Barge-in: the reply stops for good; what had started playing is what the avatar said. */
  interrupt(): void
}

/**
 * The page's playback of the sentences sent, as the server can reckon it: each starts when it
 * arrives or when the one ahead ends, whichever is later, and lasts its duration; a pause shifts
 * what had not finished. Tells what the avatar had said at a moment, and when it stops speaking.
 */
function playbackReckoning() {
  const sentences: Array<{ text: string; start: number; end: number }> = []
  let end = 0
  let pausedAt: number | undefined
  // Replaced at each pause and resume, to wake whoever waits for the end.
  let changed = new AbortController()
  const change = () => {
    changed.abort()
    changed = new AbortController()
  }
  return {
    sent(text: string, durationMs: number) {
      const start = Math.max(performance.now() + PLAYBACK_LEAD_MS, end)
      end = start + durationMs
      sentences.push({ text, start, end })
    },
    pause() {
      pausedAt ??= performance.now()
      change()
    },
    resume() {
      if (pausedAt === undefined) return
      const at = pausedAt
      const shift = performance.now() - at
      pausedAt = undefined
      for (const sentence of sentences) {
        if (sentence.end <= at) continue
        if (sentence.start > at) sentence.start += shift
        sentence.end += shift
      }
      end = Math.max(end + shift, performance.now())
      change()
    },
    /** The sentences that had started playing by the pause, or by now: what the person heard. */
    said(): string {
      const by = pausedAt ?? performance.now()
      return sentences
        .filter((sentence) => sentence.start <= by)
        .map((sentence) => sentence.text)
        .join(' ')
    },
    /** Resolves when the last sentence has played (a pause holds it), or when `signal` aborts. */
    async over(signal: AbortSignal): Promise<void> {
      while (!signal.aborted) {
        const waiting = pausedAt !== undefined ? Infinity : end - performance.now()
        if (waiting <= 0) return
        const wake = AbortSignal.any([signal, changed.signal])
        await sleep(waiting === Infinity ? 2 ** 31 - 1 : waiting, undefined, { signal: wake }).catch(() => {})
      }
    },
  }
}

function reason(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'the provider failed'
}

/** Playing time of a WAV without a timing: the samples present (a streamed WAV's sizes are placeholders). */
function wavDurationMs(wav: Buffer): number {
  const sampleRate = wav.length >= 28 ? wav.readUInt32LE(24) : 22_050
  return Math.round(((wav.length - WAV_HEADER_BYTES) / 2 / sampleRate) * 1000)
}

/** A WAV whose RIFF and data sizes say what it holds (synthesis of a long sentence streams with placeholder sizes). */
function withExactSizes(wav: Buffer): Buffer {
  if (wav.length < WAV_HEADER_BYTES || wav.toString('latin1', 36, 40) !== 'data') return wav
  wav.writeUInt32LE(wav.length - 8, 4)
  wav.writeUInt32LE(wav.length - WAV_HEADER_BYTES, 40)
  return wav
}

export function createReplyTurn(
  context: ReplyContext,
  options: {
    /** The recogniser's transcript to come, or the utterance for the provider to transcribe. */
    heard: Promise<string> | Float32Array
    settings: ReplySettings
    /** Started before the end of the turn: held until `confirm`, and the budget is the confirmer's to count. */
    preemptive?: boolean
    /** Paused from the start (without a `paused` frame): the sound that paused the reply this one replaces, at `atMs`. */
    pausedAt?: number
  },
): ReplyTurn {
  const { settings } = options
  const interruption = new AbortController()
  const discarding = new AbortController()
  // Everything that stops the reply: barge-in, discarding, the socket closing, the end of a stop's grace, a synthesis failure.
  const halt = new AbortController()
  const signal = AbortSignal.any([interruption.signal, discarding.signal, context.gone, context.shutdownDeadline, halt.signal])
  const outlet = createReplyOutlet<VoiceEvent>(context.send, options.preemptive ? ['unconfirmed'] : [])
  const playback = playbackReckoning()
  // Set at barge-in: what was said by then is what is stored.
  let spoken: string | undefined
  let pausedAt: number | undefined
  let finished = false
  /** Holds the reply's frames and its playback's reckoning from `atMs` (the page is told by the caller). */
  const holdFrom = (atMs: number) => {
    pausedAt = atMs
    playback.pause()
    outlet.hold('paused')
  }
  if (options.pausedAt !== undefined) holdFrom(options.pausedAt)

  const transcript = recognise()
  transcript.catch(() => {})

  async function recognise(): Promise<string> {
    const { heard } = options
    if (!(heard instanceof Float32Array)) return (await heard).trim()
    const result = await context.asr.transcribe({
      audio: encodeWav16(heard, VAD_SAMPLE_RATE),
      filename: 'utterance.wav',
      mimeType: 'audio/wav',
      container: 'WAVE',
      language: settings.language,
      signal,
    })
    return result.text.trim()
  }

  // Barge-in is told at once, whatever is still running (a synthesis, the model): the page stops
  // now, and no frame of this reply follows.
  interruption.signal.addEventListener(
    'abort',
    () => {
      // A discarded reply sends nothing (it may still be the current one until its run ends).
      if (context.gone.aborted || discarding.signal.aborted || spoken !== undefined) return
      spoken = playback.said()
      outlet.close()
      void context.send({ type: 'interrupted', replyText: spoken })
    },
    { once: true },
  )
  discarding.signal.addEventListener('abort', () => outlet.close(), { once: true })
  // The socket outlives its replies: the listener goes with the run (or with a run that never ran).
  const closeOutlet = () => outlet.close()
  context.gone.addEventListener('abort', closeOutlet, { once: true })

  async function run(): Promise<void> {
    const started = performance.now()
    const timings: Record<string, number> = {}
    const mark = (name: string) => (timings[name] ??= Math.round(performance.now() - started))
    let outcome = 'closed'
    try {
      outcome = await reply(mark)
      // A reply that ends while its frames are held (an error written while paused, or before a
      // preemptive reply is confirmed) lasts until they go out or are dropped: until then it is
      // the reply that `resumed`, `interrupted` and the confirmation are for, and the socket's next turn waits.
      await outlet.flowing()
    } finally {
      finished = true
      context.gone.removeEventListener('abort', closeOutlet)
      context.log.info({ sessionId: context.sessionId, outcome, preemptive: options.preemptive === true, ms: timings, responseTime: performance.now() - started }, 'voice turn')
    }
  }

  async function ending(store?: (said?: string) => Promise<void>): Promise<string> {
    if (discarding.signal.aborted) return 'discarded'
    if (context.gone.aborted) {
      // The page went away while the avatar spoke: what it had played was heard.
      const heard = playback.said()
      if (heard && store) await store(heard)
      return 'closed'
    }
    if (spoken !== undefined) {
      if (spoken && store) await store(spoken)
      return 'interrupted'
    }
    await outlet.emit({ type: 'error', message: SHUTDOWN_MESSAGE })
    return 'error'
  }

  async function reply(mark: (name: string) => void): Promise<string> {
    if (signal.aborted) return ending()
    let text: string
    try {
      text = await transcript
    } catch (error) {
      if (signal.aborted) return ending()
      context.log.warn({ err: error }, 'voice turn: recognition failed')
      await outlet.emit({ type: 'error', message: `Speech recognition failed: ${reason(error)}` })
      return 'error'
    }
    mark('recognised')
    if (signal.aborted) return ending()
    await outlet.emit({ type: 'transcript', text, final: true })
    if (!text) return 'empty'
    if (!options.preemptive) {
      const denied = await context.chat.admit()
      if (denied) {
        await outlet.emit({ type: 'error', message: denied })
        return 'error'
      }
    }

    const splitter = new SentenceSplitter()
    let voice = settings.voice === undefined ? undefined : findVoice(settings.voice)
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
        const stream = await context.tts.synthesize({ text: sentence, voice, ratePercent: 0, format: 'wav', signal })
        const parts: Uint8Array[] = []
        for await (const chunk of stream.chunks) parts.push(chunk)
        const wav = withExactSizes(Buffer.concat(parts))
        const timing = stream.timing ? await stream.timing : undefined
        if (signal.aborted) return
        const durationMs = timing ? Math.round(timing.durationMs) : wavDurationMs(wav)
        mark('firstAudio')
        const event: VoiceEvent = { type: 'audio', index, text: sentence, format: 'wav', durationMs, visemes: timing ? visemeTimeline(timing) : null, audio: wav.toString('base64') }
        // Playing from when it is handed to the socket (which queues it at once).
        await outlet.emit(event, () => playback.sent(sentence, durationMs))
      } catch (error) {
        if (signal.aborted) return
        synthesisFailed = error instanceof SynthesisError ? error.message : reason(error)
        context.log.warn({ err: error }, 'voice turn: synthesis failed')
        halt.abort(error)
      }
    }

    const turnOf = await context.chat.stream(text, settings.meta, {
      signal,
      onToken: async (content) => {
        if (signal.aborted) return
        mark('firstToken')
        await outlet.emit({ type: 'token', content })
        for (const sentence of splitter.push(content)) speak(sentence)
      },
    })
    const result = turnOf.outcome
    if (result.type === 'done' && !signal.aborted) for (const sentence of splitter.end()) speak(sentence)
    if (result.type === 'error') halt.abort(new Error(result.message))
    await speaking
    if (synthesisFailed !== undefined) {
      await outlet.emit({ type: 'error', message: `Speech synthesis failed: ${synthesisFailed}` })
      return 'error'
    }
    if (result.type === 'error') {
      await outlet.emit({ type: 'error', message: result.message })
      return 'error'
    }
    if (signal.aborted || result.type === 'aborted') return ending(turnOf.store)
    // Only once its frames flow: a preemptive reply may yet be discarded, a paused one interrupted.
    if (!(await outlet.flowing())) return ending(turnOf.store)
    await outlet.emit({ type: 'done', ...result.reply })
    mark('sent')
    // The avatar's turn lasts while the page plays it: speech over it until then is barge-in,
    // and what is stored is what was said (all of it, unless it was interrupted).
    await playback.over(signal)
    if (spoken !== undefined || context.gone.aborted) return ending(turnOf.store)
    await turnOf.store()
    return 'done'
  }

  return {
    transcript,
    get pausedAt() {
      return pausedAt
    },
    get interrupted() {
      return spoken !== undefined
    },
    run,
    confirm: () => outlet.release('unconfirmed'),
    discard: () => discarding.abort(new Error('discarded')),
    pause(atMs) {
      if (finished || outlet.closed || pausedAt !== undefined) return
      holdFrom(atMs)
      void context.send({ type: 'paused', atMs })
    },
    resume() {
      if (pausedAt === undefined || outlet.closed) return
      pausedAt = undefined
      playback.resume()
      void context.send({ type: 'resumed' })
      outlet.release('paused')
    },
    interrupt: () => interruption.abort(new Error('interrupted')),
  }
}
