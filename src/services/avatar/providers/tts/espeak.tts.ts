import { availableParallelism } from 'node:os'
import { Readable } from 'node:stream'
import { MessageChannel } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { EspeakResult, EspeakTask, EspeakWorkerData } from './espeak.worker.ts'
import { splitIntoSegments } from './segments.ts'
import { type ProviderStatus, type SpeechTiming, SynthesisError, type SynthesisRequest, type SynthesisStream, type TimedPhoneme, type TtsProvider } from './tts.port.ts'
import { ESPEAK_SAMPLE_RATE, wavHeader } from './wav.ts'

/**
 * Characters per segment. A request buffers at most one segment of audio
 * when its client reads slower than synthesis: 400 characters is at most ~100 s of Mandarin,
 * ~4.4 MB of WAV or ~0.8 MB of MP3. A segment streams out while it is synthesised, so its length does not delay
 * the first byte.
 */
const SEGMENT_CHARS = 400

/** espeak-ng's default speaking rate, in words per minute. */
const BASE_WPM = 175

export interface EspeakOptions {
  /** Worker threads; 0 means one per CPU core. */
  threads?: number
  /**
   * Start every thread now and warm it (espeak-ng loaded, a paragraph spoken in every voice)
   * before `ready()` settles, and keep the threads for the provider's life. Otherwise threads
   * start on the first synthesis and stop after a minute without work.
   */
  warm?: boolean
}

/** espeak-ng's words-per-minute for a rate change in percent, within what it accepts. */
function espeakSpeed(ratePercent: number): number {
  return Math.min(450, Math.max(80, Math.round(BASE_WPM * (1 + ratePercent / 100))))
}

/**
 * The local provider: espeak-ng (WebAssembly) in a pool of worker threads, so syntheses run
 * on every core and never block the event loop. A text is spoken segment by segment; each
 * segment streams out of its worker while it is synthesised, and the next one starts only
 * when the reply has taken the previous one, so a request holds at most one segment of audio.
 */
export function createEspeakProvider(options: EspeakOptions = {}): TtsProvider & { warmedVoices(): Promise<string[][]> } {
  const threads = options.threads && options.threads > 0 ? options.threads : availableParallelism()
  const warm = options.warm ?? false
  let pool: Piscina | undefined
  const getPool = () => {
    pool ??= new Piscina({
      filename: new URL('./espeak.worker.ts', import.meta.url).href,
      minThreads: warm ? threads : 0,
      maxThreads: threads,
      idleTimeout: warm ? Number.POSITIVE_INFINITY : 60_000,
      workerData: { warm } satisfies EspeakWorkerData,
    })
    return pool
  }
  // One task per thread, sent together: each free thread takes one, and none is answered before
  // its thread has loaded (and, warm, spoken its warm-up paragraphs).
  const loaded: Promise<string[][]> = warm ? Promise.all(Array.from({ length: threads }, () => getPool().run(undefined, { name: 'loaded' }))) : Promise.resolve([])
  loaded.catch(() => {})

  /** One segment: its audio as it is made, and the worker's result (its phonemes) once it is done. */
  const runSegment = (request: SynthesisRequest, text: string): { audio: AsyncIterable<Uint8Array>; result: Promise<EspeakResult> } => {
    const channel = new MessageChannel()
    // The worker posts `null` after its last chunk, on the same port, so no chunk is lost to
    // the task's own completion message overtaking it.
    const audio = new Readable({ objectMode: true, read() {} })
    channel.port1.on('message', (chunk: Uint8Array | null) => audio.push(chunk))
    audio.once('close', () => channel.port1.close())
    const task: EspeakTask = {
      text,
      voice: request.voice.espeak,
      speed: espeakSpeed(request.ratePercent),
      format: request.format,
      port: channel.port2,
    }
    // The request's signal is not handed to the pool: piscina stops a running task by terminating
    // its thread, and the thread that replaces it loads espeak-ng again (seconds), which the next
    // sentence waits for (a voice reply dropped or interrupted mid-sentence delayed the next reply's
    // first audio by 2.3 s in bench/avatar-voice.ts). A segment is at most SEGMENT_CHARS: an
    // aborted request stops at the next segment instead.
    const result: Promise<EspeakResult> = getPool().run(task, { transferList: [channel.port2] })
    result.catch((error: unknown) => audio.destroy(new SynthesisError('Speech synthesis failed', { cause: error })))
    return { audio, result }
  }

  return {
    name: 'espeak',
    queued: () => pool?.queueSize ?? 0,
    ready: () => loaded.then(() => {}),
    /** The voices each started thread spoke while warming (one list per thread). */
    warmedVoices: () => loaded,
    async status(): Promise<ProviderStatus> {
      return { provider: 'espeak', available: true }
    },
    async synthesize(request: SynthesisRequest): Promise<SynthesisStream> {
      const segments = splitIntoSegments(request.text, SEGMENT_CHARS, SEGMENT_CHARS)
      if (segments.length === 0) throw new SynthesisError('Nothing to synthesise')
      // The phonemes of every segment, placed after the audio of the segments before it.
      const timing = deferred<SpeechTiming>()
      async function* all(): AsyncGenerator<Uint8Array> {
        const phonemes: TimedPhoneme[] = []
        let offsetMs = 0
        try {
          for (const segment of segments) {
            if (request.signal?.aborted) return
            const { audio, result } = runSegment(request, segment)
            yield* audio
            const done = await result
            for (const event of done.phonemes) phonemes.push({ phoneme: event.phoneme, startMs: offsetMs + event.atMs })
            offsetMs += (done.pcmBytes / 2 / done.sampleRate) * 1000
          }
          timing.resolve({ durationMs: offsetMs, phonemes })
        } catch (error) {
          timing.reject(error)
          throw error
        } finally {
          // A reader that stops early leaves the timing unknown.
          timing.reject(new SynthesisError('The audio was not read to its end'))
        }
      }
      const iterator = all()
      // Wait for the first audio so that a failure before any byte is an HTTP error.
      const first = await iterator.next()
      if (first.done) throw new SynthesisError('Speech synthesis produced no audio')

      if (request.format === 'wav' && segments.length === 1) {
        // One segment is small (bounded by the segment length): send it with exact sizes.
        const parts = [first.value]
        for await (const chunk of { [Symbol.asyncIterator]: () => iterator }) parts.push(chunk)
        const dataBytes = parts.reduce((sum, part) => sum + part.length, 0)
        const header = wavHeader(ESPEAK_SAMPLE_RATE, dataBytes)
        return { provider: 'espeak', length: header.length + dataBytes, chunks: fromArray([header, ...parts]), timing: timing.promise }
      }
      async function* rest(): AsyncGenerator<Uint8Array> {
        if (request.format === 'wav') yield wavHeader(ESPEAK_SAMPLE_RATE)
        yield first.value as Uint8Array
        yield* { [Symbol.asyncIterator]: () => iterator }
      }
      return { provider: 'espeak', chunks: rest(), timing: timing.promise }
    },
    async close() {
      await pool?.destroy()
      pool = undefined
    },
  }
}

/** A promise settled from outside (the first settlement wins); never an unhandled rejection. */
function deferred<T>() {
  let resolve: (value: T) => void = () => {}
  let reject: (reason: unknown) => void = () => {}
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok
    reject = fail
  })
  promise.catch(() => {})
  return { promise, resolve, reject }
}

async function* fromArray(parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield part
}
