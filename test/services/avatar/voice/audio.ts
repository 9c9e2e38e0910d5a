// Microphone audio for voice-mode tests: real speech (espeak-ng's library, the one the avatar
// speaks with) resampled to 16 kHz 16-bit mono PCM, silence, and noise, as a page would send it;
// and the same as raw Opus packets (libopus, through opusscript), as a page with WebCodecs sends it.
import OpusScript from 'opusscript'
import { decodeWav, resample } from '../../../../src/services/avatar/providers/asr/wav-decode.ts'
import { createEspeakProvider } from '../../../../src/services/avatar/providers/tts/espeak.tts.ts'
import { findVoice } from '../../../../src/services/avatar/providers/tts/voices.ts'

export const RATE = 16_000

function toPcm(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2)
  for (let index = 0; index < samples.length; index++) out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[index])) * 32767), index * 2)
  return out
}

/** `text` spoken by espeak-ng, as 16 kHz PCM. */
export async function speechPcm(texts: string[]): Promise<Buffer[]> {
  const provider = createEspeakProvider({ threads: 1, warm: false })
  const voice = findVoice('en-US-GuyNeural')
  if (!voice) throw new Error('no voice')
  try {
    const out: Buffer[] = []
    for (const text of texts) {
      const stream = await provider.synthesize({ text, voice, ratePercent: 0, format: 'wav' })
      const parts: Uint8Array[] = []
      for await (const chunk of stream.chunks) parts.push(chunk)
      const decoded = decodeWav(Buffer.concat(parts))
      if (!decoded) throw new Error('espeak gave no WAV')
      out.push(toPcm(resample(decoded, RATE)))
    }
    return out
  } finally {
    await provider.close()
  }
}

export function silencePcm(ms: number): Buffer {
  return Buffer.alloc(Math.round((ms / 1000) * RATE) * 2)
}

/** White noise (a deterministic generator), as loud as speech: a knock or a breath on the microphone. */
export function noisePcm(ms: number, amplitude = 0.3): Buffer {
  const samples = new Float32Array(Math.round((ms / 1000) * RATE))
  let seed = 12345
  for (let index = 0; index < samples.length; index++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    samples[index] = ((seed / 0x7fffffff) * 2 - 1) * amplitude
  }
  return toPcm(samples)
}

/** `pcm` cut into frames of `ms` (20 ms, as a page sends them). */
export function framesOf(pcm: Buffer, ms = 20): Buffer[] {
  const size = Math.round((ms / 1000) * RATE) * 2
  const frames: Buffer[] = []
  for (let offset = 0; offset < pcm.length; offset += size) frames.push(pcm.subarray(offset, Math.min(pcm.length, offset + size)))
  return frames
}

export interface OpusOptions {
  /** Audio per packet: 2.5, 5, 10, 20, 40, 60, 80, 100 or 120 ms. */
  ms?: number
  /** The rate the encoder is fed (a browser's AudioContext runs at 48 kHz); the 16 kHz PCM is resampled to it. */
  inputRate?: 16_000 | 48_000
  bitrate?: number
}

/** `pcm` (16 kHz) as raw Opus packets, one per `ms`, the last padded with silence. */
export function opusPackets(pcm: Buffer, { ms = 20, inputRate = RATE, bitrate = 24_000 }: OpusOptions = {}): Buffer[] {
  const samples = new Float32Array(pcm.length / 2)
  for (let index = 0; index < samples.length; index++) samples[index] = pcm.readInt16LE(index * 2) / 32768
  const input = toPcm(resample({ sampleRate: RATE, samples }, inputRate))
  const encoder = new OpusScript(inputRate, 1, OpusScript.Application.VOIP)
  try {
    encoder.setBitrate(bitrate)
    const frameBytes = Math.round((ms / 1000) * inputRate) * 2
    const packets: Buffer[] = []
    for (let offset = 0; offset < input.length; offset += frameBytes) {
      const frame = Buffer.alloc(frameBytes)
      input.copy(frame, 0, offset, Math.min(input.length, offset + frameBytes))
      packets.push(encoder.encode(frame, frameBytes / 2))
    }
    return packets
  } finally {
    encoder.delete()
  }
}
