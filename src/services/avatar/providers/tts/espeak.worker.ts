// Runs inside a piscina worker thread: one espeak-ng WebAssembly instance per task (the
// program keeps global state and exits), compiled once per thread, with its output file a
// character device so audio leaves as it is produced instead of piling up in the 32 MB heap.
import ESpeakNg from 'espeak-ng'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { MessagePort } from 'node:worker_threads'
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders'

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

export interface EspeakResult {
  sampleRate: number
  /** Bytes of PCM synthesised (2 per sample). */
  pcmBytes: number
  /** Bytes posted to the port. */
  outputBytes: number
}

const require = createRequire(import.meta.url)
const wasmPath = require.resolve('espeak-ng/dist/espeak-ng.wasm')
// The WebAssembly global's types live in lib.dom, which this Node project does not load.
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>
  Instance: new (module: object, imports: object) => { exports: object }
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly
const compiled = wasm.compile(readFileSync(wasmPath))
// LAME compiled to WebAssembly: about ten times faster than a JavaScript port, same output.
const compiledMp3 = wasm.compile(readFileSync(require.resolve('wasm-media-encoders/wasm/mp3')))

const WAV_HEADER_BYTES = 44
const POST_THRESHOLD = 16 * 1024
const FIRST_POST_THRESHOLD = 1024
const MP3_KBPS = 64

export default async function synthesize(task: EspeakTask): Promise<EspeakResult> {
  const module = await compiled
  let encoder: WasmMediaEncoder<'audio/mpeg'> | undefined
  if (task.format === 'mp3') {
    encoder = await createEncoder('audio/mpeg', (await compiledMp3) as Parameters<typeof createEncoder>[1])
    encoder.configure({ channels: 1, sampleRate: 22_050, bitrate: MP3_KBPS })
  }
  const sink = createSink(task, encoder)
  let lastError = ''
  await ESpeakNg({
    arguments: ['-v', task.voice, '-s', String(task.speed), '-w', '/out', '-f', '/in.txt'],
    print: () => {},
    printErr: (line) => {
      // Every run ends with a harmless "program exited … keepRuntimeAlive()" notice.
      if (!line.includes('keepRuntimeAlive')) lastError = line
    },
    instantiateWasm(imports, done) {
      const instance = new wasm.Instance(module, imports)
      done(instance, module)
      return instance.exports
    },
    preRun: [
      (es) => {
        // The text goes through a file, never argv, so a text starting with "-" is not an option.
        es.FS.writeFile('/in.txt', task.text)
        const device = es.FS.makedev(64, 0)
        es.FS.registerDevice(device, {
          open() {},
          close() {},
          read() {
            return 0
          },
          write(_stream: unknown, heap: Int8Array, offset: number, length: number) {
            sink.write(new Uint8Array(heap.buffer, heap.byteOffset + offset, length))
            return length
          },
        })
        es.FS.mkdev('/out', device)
      },
    ],
  })
  const result = sink.end()
  if (result.pcmBytes === 0) throw new Error(lastError || 'espeak-ng produced no audio')
  task.port.postMessage(null)
  return result
}

interface Sink {
  write(bytes: Uint8Array): void
  end(): EspeakResult
}

function createSink(task: EspeakTask, encoder: WasmMediaEncoder<'audio/mpeg'> | undefined): Sink {
  let header: Uint8Array = new Uint8Array(0)
  let sampleRate = 0
  let pcmBytes = 0
  let outputBytes = 0
  // A byte of PCM whose sample's other half has not arrived yet.
  let pending: Uint8Array = new Uint8Array(0)
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

  const encode = (pcm: Uint8Array) => {
    const all = pending.length > 0 ? concat([pending, pcm], pending.length + pcm.length) : pcm
    const even = all.length - (all.length % 2)
    pending = all.slice(even)
    if (even === 0) return
    if (!encoder) {
      emit(all.slice(0, even))
      return
    }
    // Copy so the Int16 view is aligned and independent of the espeak heap.
    const samples = new Int16Array(all.slice(0, even).buffer)
    const floats = new Float32Array(samples.length)
    for (let index = 0; index < samples.length; index++) floats[index] = samples[index] / 32768
    // The encoder returns a view of its own memory, valid until its next call: copy it.
    emit(encoder.encode([floats]).slice())
  }

  return {
    write(bytes) {
      let chunk = bytes
      if (header.length < WAV_HEADER_BYTES) {
        const need = WAV_HEADER_BYTES - header.length
        header = concat([header, chunk.subarray(0, need)], header.length + Math.min(need, chunk.length))
        chunk = chunk.subarray(need)
        if (header.length === WAV_HEADER_BYTES) {
          sampleRate = new DataView(header.buffer, header.byteOffset).getUint32(24, true)
          // The encoder is set up for espeak's fixed rate; anything else is a broken build.
          if (sampleRate !== 22_050) throw new Error(`unexpected espeak-ng sample rate ${sampleRate}`)
        }
      }
      if (chunk.length === 0) return
      pcmBytes += chunk.length
      encode(chunk)
    },
    end() {
      if (encoder) emit(encoder.finalize().slice())
      emit(new Uint8Array(0), true)
      return { sampleRate, pcmBytes, outputBytes }
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
