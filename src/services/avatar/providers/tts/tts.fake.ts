import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createEncoder } from 'wasm-media-encoders'
import { type ProviderStatus, SynthesisError, type SynthesisRequest, type SynthesisStream, type TtsProvider } from './tts.port.ts'
import { ESPEAK_SAMPLE_RATE, wavHeader } from './wav.ts'

const mp3Wasm = readFileSync(createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3'))

export interface FakeTtsOptions {
  /** `before`: fail before any audio (→ 502); `during`: fail after two chunks of audio. */
  fail?: 'before' | 'during'
  status?: ProviderStatus
}

/**
 * A deterministic provider for tests: a 440 Hz tone lasting 60 ms per character, shortened or
 * lengthened by the rate, as real WAV or MP3, timed as one open vowel. It records every request it gets.
 */
export function createFakeTtsProvider(options: FakeTtsOptions = {}): TtsProvider & { requests: SynthesisRequest[] } {
  const requests: SynthesisRequest[] = []
  return {
    name: 'fake',
    requests,
    async status() {
      return options.status ?? { provider: 'fake', available: true }
    },
    async synthesize(request: SynthesisRequest): Promise<SynthesisStream> {
      requests.push(request)
      if (options.fail === 'before') throw new SynthesisError('The fake provider was told to fail')
      const seconds = (request.text.length * 0.06) / (1 + request.ratePercent / 100)
      const samples = new Int16Array(Math.round(seconds * ESPEAK_SAMPLE_RATE))
      for (let index = 0; index < samples.length; index++) samples[index] = Math.round(Math.sin((2 * Math.PI * 440 * index) / ESPEAK_SAMPLE_RATE) * 8000)
      let parts: Uint8Array[]
      if (request.format === 'wav') {
        const pcm = new Uint8Array(samples.buffer)
        parts = [wavHeader(ESPEAK_SAMPLE_RATE, pcm.length), pcm]
      } else {
        const encoder = await createEncoder('audio/mpeg', mp3Wasm)
        encoder.configure({ channels: 1, sampleRate: ESPEAK_SAMPLE_RATE, bitrate: 64 })
        const floats = Float32Array.from(samples, (sample) => sample / 32768)
        parts = [encoder.encode([floats]).slice(), encoder.finalize().slice()]
      }
      const fail = options.fail === 'during'
      async function* chunks(): AsyncGenerator<Uint8Array> {
        yield parts[0]
        if (fail) {
          // Two chunks before the failure: the service holds one back, so the answer is under way.
          yield parts[1].subarray(0, Math.floor(parts[1].length / 2))
          throw new SynthesisError('The fake provider failed mid-stream')
        }
        for (const part of parts.slice(1)) yield part
      }
      // The tone is one open vowel from start to end, as a synthesiser would time it.
      const durationMs = (samples.length / ESPEAK_SAMPLE_RATE) * 1000
      return { provider: 'fake', chunks: chunks(), timing: Promise.resolve({ durationMs, phonemes: [{ phoneme: 'a', startMs: 0 }] }) }
    },
    async close() {},
  }
}
