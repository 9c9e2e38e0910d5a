// Runs inside a piscina worker thread: one espeak-ng WebAssembly instance per task (the
// program keeps global state and exits), compiled once per thread, with its output file a
// character device so audio leaves as it is produced instead of piling up in the 32 MB heap.
import { Mp3Encoder } from '@breezystack/lamejs'
import ESpeakNg from 'espeak-ng'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { MessagePort } from 'node:worker_threads'

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

const WAV_HEADER_BYTES = 44
const POST_THRESHOLD = 16 * 1024
const FIRST_POST_THRESHOLD = 1024
const MP3_KBPS = 64
const MP3_FRAME_SAMPLES = 1152

export default async function synthesize(task: EspeakTask): Promise<EspeakResult> {
  const module = await compiled
  const sink = createSink(task)
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

function createSink(task: EspeakTask): Sink {
  let header: Uint8Array = new Uint8Array(0)
  let sampleRate = 0
  let pcmBytes = 0
  let outputBytes = 0
  // PCM not yet encoded: a partial sample (odd byte) or a partial MP3 frame.
  let pending: Uint8Array = new Uint8Array(0)
  let outgoing: Uint8Array[] = []
  let outgoingBytes = 0
  const encoder = task.format === 'mp3' ? new Mp3Encoder(1, 22_050, MP3_KBPS) : undefined

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

  const encode = (pcm: Uint8Array, final: boolean) => {
    const all = pending.length > 0 ? concat([pending, pcm], pending.length + pcm.length) : pcm
    if (!encoder) {
      const even = all.length - (all.length % 2)
      emit(all.slice(0, even))
      pending = all.slice(even)
      return
    }
    const frameBytes = MP3_FRAME_SAMPLES * 2
    const usable = final ? all.length - (all.length % 2) : all.length - (all.length % frameBytes)
    // Copy so the Int16 view is aligned and independent of the wasm heap.
    const samples = new Int16Array(all.slice(0, usable).buffer)
    for (let start = 0; start < samples.length; start += MP3_FRAME_SAMPLES) {
      emit(encoder.encodeBuffer(samples.subarray(start, start + MP3_FRAME_SAMPLES)))
    }
    pending = all.slice(usable)
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
          // lamejs is set up for espeak's fixed rate; anything else is a broken build.
          if (sampleRate !== 22_050) throw new Error(`unexpected espeak-ng sample rate ${sampleRate}`)
        }
      }
      if (chunk.length === 0) return
      pcmBytes += chunk.length
      encode(chunk, false)
    },
    end() {
      encode(new Uint8Array(0), true)
      if (encoder) emit(encoder.flush())
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
