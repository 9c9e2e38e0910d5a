import { MPEGDecoder } from 'mpg123-decoder'
import { OpusDecoder } from 'opus-decoder'
import { type DecodedAudio, decodeWav } from './wav-decode.ts'

// Decoders for what the local recognizer cannot take as it is: everything becomes mono PCM.
// WAV is read here, MP3 by mpg123 and Opus (in Ogg or in WebM, as browsers record it) by libopus,
// both compiled to WebAssembly; anything else is left to the caller (sox, or a 415).

/** Mono PCM of `audio`, or undefined when this module cannot decode its container or codec. */
export async function decodeToMono(audio: Buffer, container: string): Promise<DecodedAudio | undefined> {
  if (container === 'WAVE') return decodeWav(audio)
  if (container === 'MPEG') return decodeMp3(audio)
  if (container === 'Ogg') {
    const packets = oggPackets(audio)
    if (!packets[0] || Buffer.from(packets[0].subarray(0, 8)).toString('latin1') !== 'OpusHead') return undefined
    return decodeOpus(packets[0], packets.slice(2))
  }
  if (container.startsWith('EBML')) {
    const track = webmOpus(audio)
    return track ? decodeOpus(track.head, track.frames) : undefined
  }
  return undefined
}

function mixDown(channels: Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return channels[0].subarray(0, length)
  const out = new Float32Array(length)
  for (const channel of channels) for (let index = 0; index < length; index++) out[index] += channel[index] / channels.length
  return out
}

async function decodeMp3(audio: Buffer): Promise<DecodedAudio | undefined> {
  const decoder = new MPEGDecoder()
  await decoder.ready
  try {
    const { channelData, samplesDecoded, sampleRate } = decoder.decode(new Uint8Array(audio))
    if (!samplesDecoded) return undefined
    return { sampleRate, samples: mixDown(channelData, samplesDecoded) }
  } finally {
    decoder.free()
  }
}

async function decodeOpus(head: Uint8Array, frames: Uint8Array[]): Promise<DecodedAudio | undefined> {
  if (head.length < 19 || Buffer.from(head.subarray(0, 8)).toString('latin1') !== 'OpusHead') return undefined
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  const channels = head[9]
  // Mapping families other than 0 (surround) need stream tables this path does not read.
  if (head[18] !== 0 || channels < 1 || channels > 2) return undefined
  // libopus decodes straight to the recognizer's 16 kHz.
  const decoder = new OpusDecoder({ sampleRate: 16000, channels, preSkip: view.getUint16(10, true) })
  await decoder.ready
  try {
    const { channelData, samplesDecoded } = decoder.decodeFrames(frames)
    if (!samplesDecoded) return undefined
    return { sampleRate: 16000, samples: mixDown(channelData, samplesDecoded) }
  } finally {
    decoder.free()
  }
}

/** The packets of an Ogg stream (its first logical stream; page CRCs are not checked). */
function oggPackets(audio: Buffer): Uint8Array[] {
  const packets: Uint8Array[] = []
  let pending: Uint8Array[] = []
  let offset = 0
  while (offset + 27 <= audio.length && audio.toString('latin1', offset, offset + 4) === 'OggS') {
    const count = audio[offset + 26]
    let data = offset + 27 + count
    for (const size of audio.subarray(offset + 27, offset + 27 + count)) {
      pending.push(audio.subarray(data, data + size))
      data += size
      // A lacing value under 255 ends a packet.
      if (size < 255) {
        packets.push(Buffer.concat(pending))
        pending = []
      }
    }
    offset = data
  }
  return packets
}

// Matroska/WebM element ids (with their length marker, as written).
const CONTAINERS = new Set([0x18538067 /* Segment */, 0x1f43b675 /* Cluster */, 0x1654ae6b /* Tracks */, 0xae /* TrackEntry */, 0xa0 /* BlockGroup */])
const CODEC_ID = 0x86
const CODEC_PRIVATE = 0x63a2
const SIMPLE_BLOCK = 0xa3
const BLOCK = 0xa1

function vintLength(first: number): number {
  for (let length = 1; length <= 8; length++) if (first & (0x100 >> length)) return length
  return 0
}

/**
 * The Opus track of a WebM file as MediaRecorder writes it: its OpusHead (CodecPrivate) and its
 * frames, read by walking the elements in order (clusters of unknown size included). Returns
 * undefined for another codec, or for laced blocks, which browsers do not write.
 */
export function webmOpus(audio: Buffer): { head: Uint8Array; frames: Uint8Array[] } | undefined {
  let codec = ''
  let head: Uint8Array | undefined
  const frames: Uint8Array[] = []
  let offset = 0
  while (offset < audio.length) {
    const idLength = vintLength(audio[offset])
    if (!idLength || offset + idLength > audio.length) break
    const id = audio.readUIntBE(offset, idLength)
    const sizeAt = offset + idLength
    const sizeLength = vintLength(audio[sizeAt])
    if (!sizeLength || sizeAt + sizeLength > audio.length) break
    let size = audio[sizeAt] & (0xff >> sizeLength)
    let unknown = size === 0xff >> sizeLength
    for (let index = 1; index < sizeLength; index++) {
      size = size * 256 + audio[sizeAt + index]
      if (audio[sizeAt + index] !== 0xff) unknown = false
    }
    const start = sizeAt + sizeLength
    if (CONTAINERS.has(id)) {
      offset = start
      continue
    }
    if (unknown) break
    const end = Math.min(audio.length, start + size)
    if (id === CODEC_ID) codec = audio.toString('latin1', start, end)
    else if (id === CODEC_PRIVATE) head = audio.subarray(start, end)
    else if (id === SIMPLE_BLOCK || id === BLOCK) {
      const trackLength = vintLength(audio[start])
      const flags = audio[start + trackLength + 2]
      if (flags & 0x06) return undefined
      frames.push(audio.subarray(start + trackLength + 3, end))
    }
    offset = end
  }
  if (codec !== 'A_OPUS' || !head) return undefined
  return { head, frames }
}
