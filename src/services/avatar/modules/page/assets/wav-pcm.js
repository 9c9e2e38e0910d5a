// A WAV of 16-bit PCM straight into an AudioBuffer, without decodeAudioData: the voice reply's
// sentences (16-bit 22.05 kHz mono) are playable as soon as they arrive, instead of after an
// asynchronous decode and resampling (tens of milliseconds of the voice-to-voice budget). The
// buffer keeps the file's rate; the browser resamples as it plays.

// What a streamed WAV writes as the data chunk's size when it does not know the length yet
// (0xffffffff less the 36 bytes of header before it): the data runs to the end of the file.
const STREAMING_SIZES = new Set([0xffffffff, 0xffffffff - 36])

function tag(view, at) {
  return String.fromCharCode(view.getUint8(at), view.getUint8(at + 1), view.getUint8(at + 2), view.getUint8(at + 3))
}

/**
 * The format and the samples' place in a WAV of 16-bit PCM, or null for anything else (another
 * encoding, a truncated header), which the caller then hands to decodeAudioData.
 */
export function readPcmWav(bytes) {
  const view = new DataView(bytes)
  if (view.byteLength < 12 || tag(view, 0) !== 'RIFF' || tag(view, 8) !== 'WAVE') return null
  let format = null
  for (let at = 12; at + 8 <= view.byteLength; ) {
    const id = tag(view, at)
    const size = view.getUint32(at + 4, true)
    const body = at + 8
    if (id === 'fmt ' && size >= 16 && body + 16 <= view.byteLength) {
      format = { encoding: view.getUint16(body, true), channels: view.getUint16(body + 2, true), rate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true) }
    } else if (id === 'data') {
      // PCM, or WAVE_FORMAT_EXTENSIBLE (whose subformat a 16-bit stream has always been PCM in practice).
      if (!format || (format.encoding !== 1 && format.encoding !== 0xfffe) || format.bits !== 16 || format.channels < 1 || format.rate < 1) return null
      const present = view.byteLength - body
      const length = STREAMING_SIZES.has(size) ? present : Math.min(size, present)
      const frame = 2 * format.channels
      return { rate: format.rate, channels: format.channels, offset: body, frames: Math.floor(length / frame) }
    }
    // Chunks are padded to an even size.
    at = body + size + (size % 2)
  }
  return null
}

/** An AudioBuffer of a 16-bit PCM WAV (every channel), or null when `bytes` is not one. */
export function pcmWavToAudioBuffer(context, bytes) {
  const wav = readPcmWav(bytes)
  if (!wav || wav.frames === 0) return null
  const view = new DataView(bytes, wav.offset, wav.frames * wav.channels * 2)
  const buffer = context.createBuffer(wav.channels, wav.frames, wav.rate)
  for (let channel = 0; channel < wav.channels; channel++) {
    const samples = buffer.getChannelData(channel)
    for (let index = 0; index < wav.frames; index++) samples[index] = view.getInt16((index * wav.channels + channel) * 2, true) / 32768
  }
  return buffer
}
