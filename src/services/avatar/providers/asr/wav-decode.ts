/** PCM decoded from a WAV file: mono, as floats in −1…1. */
export interface DecodedAudio {
  sampleRate: number
  samples: Float32Array
}

/**
 * Decodes the WAV files recorders and browsers produce (integer PCM of 8, 16, 24 or 32 bits,
 * or 32-bit float; WAVE_FORMAT_EXTENSIBLE included), mixing channels down to mono. Returns
 * undefined for anything else, so the caller can try another decoder.
 */
export function decodeWav(buffer: Buffer): DecodedAudio | undefined {
  if (buffer.length < 12 || buffer.toString('ascii', 0, 4) !== 'RIFF' || buffer.toString('ascii', 8, 12) !== 'WAVE') return undefined
  let offset = 12
  let format = 0
  let channels = 0
  let sampleRate = 0
  let bits = 0
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('ascii', offset, offset + 4)
    const size = buffer.readUInt32LE(offset + 4)
    const body = offset + 8
    if (id === 'fmt ' && body + 16 <= buffer.length) {
      format = buffer.readUInt16LE(body)
      channels = buffer.readUInt16LE(body + 2)
      sampleRate = buffer.readUInt32LE(body + 4)
      bits = buffer.readUInt16LE(body + 14)
      // WAVE_FORMAT_EXTENSIBLE keeps the real format in the first two bytes of its GUID.
      if (format === 0xfffe && size >= 26 && body + 26 <= buffer.length) format = buffer.readUInt16LE(body + 24)
    } else if (id === 'data') {
      if (!channels || !sampleRate || !(format === 1 || (format === 3 && bits === 32))) return undefined
      const bytes = bits / 8
      if (![1, 2, 3, 4].includes(bytes)) return undefined
      // Streamed WAVs declare an oversized data chunk; read what is there.
      const end = Math.min(buffer.length, body + size)
      const frames = Math.floor((end - body) / (bytes * channels))
      const samples = new Float32Array(frames)
      for (let frame = 0; frame < frames; frame++) {
        let sum = 0
        for (let channel = 0; channel < channels; channel++) {
          const at = body + (frame * channels + channel) * bytes
          if (format === 3) sum += buffer.readFloatLE(at)
          else if (bytes === 1) sum += (buffer[at] - 128) / 128
          else if (bytes === 2) sum += buffer.readInt16LE(at) / 32768
          else if (bytes === 3) sum += buffer.readIntLE(at, 3) / 8388608
          else sum += buffer.readInt32LE(at) / 2147483648
        }
        samples[frame] = sum / channels
      }
      return { sampleRate, samples }
    }
    offset = body + size + (size % 2)
  }
  return undefined
}

/** Linear-interpolation resampling; enough for a speech recognizer's 16 kHz input. */
export function resample(audio: DecodedAudio, rate: number): Float32Array {
  if (audio.sampleRate === rate) return audio.samples
  const ratio = audio.sampleRate / rate
  const length = Math.floor(audio.samples.length / ratio)
  const out = new Float32Array(length)
  for (let index = 0; index < length; index++) {
    const position = index * ratio
    const left = Math.floor(position)
    const right = Math.min(left + 1, audio.samples.length - 1)
    const fraction = position - left
    out[index] = audio.samples[left] * (1 - fraction) + audio.samples[right] * fraction
  }
  return out
}

/** The samples of `parts`, one after another. */
export function joinSamples(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** A 16-bit mono WAV file of `samples`. */
export function encodeWav16(samples: Float32Array, sampleRate: number): Buffer {
  const out = Buffer.alloc(44 + samples.length * 2)
  out.write('RIFF', 0, 'ascii')
  out.writeUInt32LE(36 + samples.length * 2, 4)
  out.write('WAVEfmt ', 8, 'ascii')
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(1, 22)
  out.writeUInt32LE(sampleRate, 24)
  out.writeUInt32LE(sampleRate * 2, 28)
  out.writeUInt16LE(2, 32)
  out.writeUInt16LE(16, 34)
  out.write('data', 36, 'ascii')
  out.writeUInt32LE(samples.length * 2, 40)
  for (let index = 0; index < samples.length; index++) out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[index])) * 32767), 44 + index * 2)
  return out
}
