import koffi from 'koffi'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import type { RecognitionStream } from './asr.port.ts'
import { joinSamples } from './wav-decode.ts'

// Debian's libpocketsphinx (the library of pocketsphinx_continuous), called in process through
// koffi: a decoder loads its model once (0.3-0.6 s, about 95 MB) and then reads audio as it
// arrives, so the transcript of a turn is ready a few milliseconds after its end instead of a
// process start and a model load later. Every call runs on libuv's thread pool (koffi's
// `.async`), never on the event loop.

type Pointer = unknown
type Call = { async: (...args: unknown[]) => void; (...args: unknown[]): unknown }

interface Native {
  configure(modelDir: string): Pointer
  init: Call
  startUtt: Call
  endUtt: Call
  processRaw: Call
  getHyp: Call
}

/** The model files of Debian's pocketsphinx-en-us under `modelDir`. */
export function modelOptions(modelDir: string): Record<string, string> {
  return { '-hmm': join(modelDir, 'en-us'), '-lm': join(modelDir, 'en-us.lm.bin'), '-dict': join(modelDir, 'cmudict-en-us.dict') }
}

/** How a decoder searches (bench/avatar-voice-decoder.ts measures alternatives). */
export const SEARCH_OPTIONS: Readonly<Record<string, string>> = {
  // The first pass only: its hypothesis is final at once. The second and third passes
  // (fwdflat, bestpath) take 100-350 ms at the end of each utterance for a few words
  // fewer errors (bench/README.md, "Voice mode: word errors").
  '-fwdflat': 'no',
  '-bestpath': 'no',
  // Narrower search: at most 2500 active HMMs and 5 word exits a frame, phone lookahead over 5
  // frames. With 3000 HMMs, two to four times less CPU a second of audio than the default (0.10-0.15
  // of real time against 0.25-0.64 on this loaded 2-core machine), the same words on Debian's
  // test recordings.
  '-maxhmmpf': '2500',
  '-maxwpf': '5',
  '-pl_window': '5',
  // Cheaper acoustic scores: the top 2 Gaussians of each codebook (of 4), searched for every
  // second frame only (the frames between reuse them). With 2500 HMMs instead of 3000: a third
  // fewer instructions a second of speech (253 M against 379 M, `sh
  // bench/avatar-voice-decoder-callgrind.sh`), 0.51-0.92 of the CPU time depending on the load
  // (`node bench/avatar-voice-decoder.ts --configs before`), and 24 word errors instead of 25 on
  // the 92 words of voice mode's test recordings (bench/README.md, "Decoder CPU per second of speech").
  '-ds': '2',
  '-topn': '2',
}

function loadNative(): Native | undefined {
  try {
    const sphinxbase = koffi.load('libsphinxbase.so.3')
    const pocketsphinx = koffi.load('libpocketsphinx.so.3')
    const cmdLnInit = sphinxbase.func('void *cmd_ln_init(void *inout, void *defn, int strict, ...)')
    const psArgs = pocketsphinx.func('void *ps_args()')
    return {
      configure: (modelDir) => {
        const options = { ...modelOptions(modelDir), '-logfn': '/dev/null', ...SEARCH_OPTIONS }
        const args = Object.entries(options).flatMap(([name, value]) => ['str', name, 'str', value])
        return cmdLnInit(null, psArgs(), 1, ...args, 'void *', null)
      },
      init: pocketsphinx.func('void *ps_init(void *config)'),
      startUtt: pocketsphinx.func('int ps_start_utt(void *ps)'),
      endUtt: pocketsphinx.func('int ps_end_utt(void *ps)'),
      processRaw: pocketsphinx.func('int ps_process_raw(void *ps, const int16_t *data, size_t n, int no_search, int full_utt)'),
      getHyp: pocketsphinx.func('const char *ps_get_hyp(void *ps, int32_t *score)'),
    }
  } catch {
    return undefined
  }
}

/** Half a second of 16 kHz audio: the most one native call decodes. */
const MAX_SAMPLES_A_CALL = 8000

/** A native call on the thread pool. */
function onPool(fn: Call, ...args: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => fn.async(...args, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result))))
}

/**
 * Decoders of one model, loaded as turns need them and kept: at most `max` (one per core by
 * default, about 95 MB each). A turn that finds them all busy waits for one with its audio kept;
 * the decoder then reads that audio at several times real time.
 */
class DecoderPool {
  private idle: Pointer[] = []
  private loaded = 0
  private waiting: Array<{ resolve(decoder: Pointer): void; reject(error: unknown): void }> = []

  readonly native: Native
  private modelDir: string
  private max: number

  constructor(native: Native, modelDir: string, max: number) {
    this.native = native
    this.modelDir = modelDir
    this.max = max
  }

  // Decoders being loaded that no turn waits for yet (the warm-up's).
  private spare = 0

  acquire(): Promise<Pointer> {
    const ready = this.idle.pop()
    if (ready !== undefined) return Promise.resolve(ready)
    const waiting = new Promise<Pointer>((resolve, reject) => this.waiting.push({ resolve, reject }))
    if (this.spare > 0) this.spare--
    else if (this.loaded < this.max) this.load()
    return waiting
  }

  release(decoder: Pointer): void {
    const next = this.waiting.shift()
    if (next) next.resolve(decoder)
    else this.idle.push(decoder)
  }

  /** Loads the first decoder ahead of the first turn. */
  warm(): void {
    if (this.loaded > 0) return
    this.spare++
    this.load()
  }

  private load(): void {
    this.loaded++
    onPool(this.native.init, this.native.configure(this.modelDir))
      .then((decoder) => {
        if (!decoder) throw new Error(`pocketsphinx could not load its model from ${this.modelDir}`)
        return decoder
      })
      .then(
      (decoder) => this.release(decoder),
      (error: unknown) => {
        this.loaded--
        this.spare = 0
        // The turns waiting fail (their recognition reports it); the next turn tries again.
        for (const waiter of this.waiting.splice(0)) waiter.reject(error)
      },
    )
  }
}

// One pool per model directory in the process: every app (and test) of the process shares it.
const pools = new Map<string, DecoderPool>()
let native: Native | undefined | null

/** The resident decoders of `modelDir`, or undefined when libpocketsphinx cannot be loaded here. */
export function pocketsphinxDecoders(modelDir: string): DecoderPool | undefined {
  if (native === undefined) native = loadNative() ?? null
  if (!native) return undefined
  let pool = pools.get(modelDir)
  if (!pool) pools.set(modelDir, (pool = new DecoderPool(native, modelDir, availableParallelism())))
  return pool
}

/**
 * One utterance on a resident decoder: audio is decoded as it is pushed (in order, one native
 * call at a time), partial hypotheses are read on the way, and the end gives the transcript.
 */
export function openPocketsphinxStream(pool: DecoderPool): RecognitionStream {
  const { native } = pool
  let queued: Float32Array[] = []
  let decoder: Pointer | undefined
  let released = false
  const score = new Int32Array(1)
  // Native calls of this utterance, one after the other.
  let chain: Promise<unknown> = pool.acquire().then(async (acquired) => {
    decoder = acquired
    await onPool(native.startUtt, decoder)
  })
  const then = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work)
    chain = next.catch(() => {})
    return next
  }
  const decodeQueued = async () => {
    while (queued.length > 0) {
      const samples = toPcm16(joinSamples(queued))
      queued = []
      // A backlog (a turn that waited for a decoder) goes in half-second calls: one call holds a
      // thread of libuv's pool, which the voice activity detection of every socket also uses.
      for (let start = 0; start < samples.length; start += MAX_SAMPLES_A_CALL) {
        const part = samples.subarray(start, start + MAX_SAMPLES_A_CALL)
        await onPool(native.processRaw, decoder, part, part.length, 0, 0)
      }
    }
  }
  const hypothesis = async () => String((await onPool(native.getHyp, decoder, score)) ?? '').trim()
  const end = async () => {
    if (released || decoder === undefined) return
    released = true
    try {
      await onPool(native.endUtt, decoder)
    } finally {
      pool.release(decoder)
    }
  }
  return {
    push(samples) {
      if (released) return
      queued.push(samples)
      // One decode step for everything queued by the time the previous one ends.
      if (queued.length === 1) void then(decodeQueued).catch(() => {})
    },
    partial: () => then(async () => (released ? '' : (await decodeQueued(), hypothesis()))),
    finish() {
      const text = then(async () => {
        if (released) return ''
        await decodeQueued()
        // The first pass's hypothesis is the final one (no second pass): it is the transcript
        // already; the decoder ends the utterance after it has been handed over.
        return hypothesis()
      })
      void then(end).catch(() => {})
      return text
    },
    cancel() {
      queued = []
      void then(end).catch(() => {})
    },
  }
}

/** 16-bit PCM, as the decoder reads it. */
function toPcm16(samples: Float32Array): Int16Array {
  const pcm = new Int16Array(samples.length)
  for (let index = 0; index < samples.length; index++) pcm[index] = Math.round(Math.max(-1, Math.min(1, samples[index])) * 32767)
  return pcm
}
