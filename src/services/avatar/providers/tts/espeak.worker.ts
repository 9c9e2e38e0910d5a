// Runs inside a piscina worker thread: one espeak-ng library instance per thread, loaded once
// (its voices and dictionaries are read into the instance when the thread starts) and reused by
// every task the thread runs. Audio leaves as it is produced, buffer by buffer, and espeak's
// own phoneme events come back with it, each with its position in that audio.
import ESpeakNg from '@echogarden/espeak-ng-emscripten'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { MessagePort } from 'node:worker_threads'
import { workerData } from 'piscina'
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders'
import { VOICES } from './voices.ts'
import { ESPEAK_SAMPLE_RATE } from './wav.ts'

/** What the pool tells each of its threads (piscina's `workerData`). */
export interface EspeakWorkerData {
  /** Speak a paragraph in every voice before the thread takes its first task. */
  warm: boolean
}

export interface EspeakTask {
  text: string
  /** espeak-ng voice, e.g. `cmn+f3`. */
  voice: string
  /** Words per minute. */
  speed: number
  format: 'mp3' | 'wav'
  /** Receives `Uint8Array` chunks (MP3 frames, or raw PCM for WAV) as they are made. */
  port: MessagePort
}

/** A phoneme as espeak-ng reports it while synthesising: its IPA name and where it starts in the audio. */
interface PhonemeEvent {
  /** IPA, with stress marks; empty for a pause. */
  phoneme: string
  /** Milliseconds from the start of this task's audio. */
  atMs: number
}

export interface EspeakResult {
  sampleRate: number
  /** Bytes of PCM synthesised (2 per sample). */
  pcmBytes: number
  /** Bytes posted to the port. */
  outputBytes: number
  /** espeak-ng's phoneme events of this synthesis, in order. */
  phonemes: PhonemeEvent[]
}

const require = createRequire(import.meta.url)
// The WebAssembly global's types live in lib.dom, which this Node project does not load.
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly
// LAME compiled to WebAssembly: about ten times faster than a JavaScript port, same output.
const compiledMp3 = wasm.compile(readFileSync(require.resolve('wasm-media-encoders/wasm/mp3')))
const POST_THRESHOLD = 16 * 1024
const FIRST_POST_THRESHOLD = 1024
const MP3_KBPS = 64

// One instance for the thread's life: espeak's library (unlike its command-line program) is
// made to synthesise many texts in turn, so no task pays for loading it.
const engine = ESpeakNg().then((module) => new module.eSpeakNGWorker())

/**
 * espeak-ng is compiled to JavaScript: V8 optimises its functions only once they have run, and
 * a thread's first paragraph in a language costs 5–10 times a warm one. Two rounds of a
 * paragraph in each voice (four per language; one round left the first English request at 2.4×
 * a warm one) and one MP3 encoding bring a thread to its warm speed before any request meets it; bench/avatar-speech.ts (`first synthesis after start`) measures the effect.
 */
const WARM_UP_TEXT: Record<string, string> = {
  'en-US':
    'Good morning. I can read a whole paragraph aloud, with numbers like 42 and 1999, questions? Exclamations! ' +
    'And a quiet pause; then I carry on until the sentence ends, as people do when they talk at ease.',
  'zh-CN': '早上好。我可以朗读一整段文字，包括数字和标点符号。你有什么问题吗？请慢慢说，我会认真地听，然后回答你。今天天气很好，我们一起去公园散步吧。谢谢！',
}
const WARM_UP_ROUNDS = 2

/** Answers the espeak-ng voices spoken. */
async function warmUp(): Promise<string[]> {
  const espeak = await engine
  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    for (const voice of VOICES) {
      if (espeak.set_voice(voice.espeak) !== 0) throw new Error(`espeak-ng has no voice ${voice.espeak}`)
      espeak.synthesize(WARM_UP_TEXT[voice.locale] ?? '', () => false)
    }
  }
  const encoder = await createEncoder('audio/mpeg', (await compiledMp3) as Parameters<typeof createEncoder>[1])
  encoder.configure({ channels: 1, sampleRate: ESPEAK_SAMPLE_RATE, bitrate: MP3_KBPS })
  encoder.encode([new Float32Array(ESPEAK_SAMPLE_RATE)])
  encoder.finalize()
  return VOICES.map((voice) => voice.espeak)
}

// Top-level: piscina loads this module when the thread starts, and hands the thread no task
// before the module has loaded, so a warm thread is warm before its first task.
const warmedVoices = (workerData as EspeakWorkerData | undefined)?.warm ? await warmUp() : []

/** A task that only answers the voices this thread spoke before its first task (none unless warm). */
export function loaded(): string[] {
  return warmedVoices
}

export default async function synthesize(task: EspeakTask): Promise<EspeakResult> {
  const espeak = await engine
  if (espeak.set_voice(task.voice) !== 0) throw new Error(`espeak-ng has no voice ${task.voice}`)
  espeak.set_rate(task.speed)
  const sampleRate = espeak.get_samplerate()
  // The encoder is set up for espeak's fixed rate; anything else is a broken build.
  if (sampleRate !== ESPEAK_SAMPLE_RATE) throw new Error(`unexpected espeak-ng sample rate ${sampleRate}`)
  let encoder: WasmMediaEncoder<'audio/mpeg'> | undefined
  if (task.format === 'mp3') {
    encoder = await createEncoder('audio/mpeg', (await compiledMp3) as Parameters<typeof createEncoder>[1])
    encoder.configure({ channels: 1, sampleRate, bitrate: MP3_KBPS })
  }
  const sink = createSink(task, encoder)
  const phonemes: PhonemeEvent[] = []
  espeak.synthesize(task.text, (audio, events) => {
    for (const event of events) {
      if (event.type === 'phoneme') phonemes.push({ phoneme: typeof event.id === 'string' ? event.id : '', atMs: event.audio_position })
    }
    // Each buffer is the wrapper's own copy of espeak's output, so it can leave the thread as it is.
    if (audio && audio.length > 0) sink.write(audio)
    return false
  })
  const result = sink.end()
  if (result.pcmBytes === 0) throw new Error('espeak-ng produced no audio')
  task.port.postMessage(null)
  return { ...result, sampleRate, phonemes }
}

interface Sink {
  write(samples: Int16Array): void
  end(): { pcmBytes: number; outputBytes: number }
}

function createSink(task: EspeakTask, encoder: WasmMediaEncoder<'audio/mpeg'> | undefined): Sink {
  let pcmBytes = 0
  let outputBytes = 0
  let outgoing: Uint8Array[] = []
  let outgoingBytes = 0

  const emit = (bytes: Uint8Array, force = false) => {
    if (bytes.length > 0) {
      outgoing.push(bytes)
      outgoingBytes += bytes.length
    }
    // The first audio leaves as soon as there is any, so playback can start at once.
    const threshold = outputBytes === 0 ? FIRST_POST_THRESHOLD : POST_THRESHOLD
    if (outgoingBytes === 0 || (!force && outgoingBytes < threshold)) return
    const joined = concat(outgoing, outgoingBytes)
    outputBytes += joined.length
    task.port.postMessage(joined, [joined.buffer as ArrayBuffer])
    outgoing = []
    outgoingBytes = 0
  }

  return {
    write(samples) {
      pcmBytes += samples.byteLength
      if (!encoder) {
        emit(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength))
        return
      }
      const floats = new Float32Array(samples.length)
      for (let index = 0; index < samples.length; index++) floats[index] = samples[index] / 32768
      // The encoder returns a view of its own memory, valid until its next call: copy it.
      emit(encoder.encode([floats]).slice())
    },
    end() {
      if (encoder) emit(encoder.finalize().slice())
      emit(new Uint8Array(0), true)
      return { pcmBytes, outputBytes }
    },
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(total)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}
