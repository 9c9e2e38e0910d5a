// Readers for the audio the speech endpoints return, so tests check real audio, not bytes.

export interface WavInfo {
  format: number
  channels: number
  sampleRate: number
  bitsPerSample: number
  /** The data size the header declares. */
  declaredDataBytes: number
  /** The PCM bytes actually present. */
  dataBytes: number
  seconds: number
}

export function parseWav(body: Buffer): WavInfo {
  if (body.toString('ascii', 0, 4) !== 'RIFF' || body.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE file')
  let offset = 12
  let fmt: { format: number; channels: number; sampleRate: number; bitsPerSample: number } | undefined
  while (offset + 8 <= body.length) {
    const id = body.toString('ascii', offset, offset + 4)
    const size = body.readUInt32LE(offset + 4)
    if (id === 'fmt ') {
      fmt = {
        format: body.readUInt16LE(offset + 8),
        channels: body.readUInt16LE(offset + 10),
        sampleRate: body.readUInt32LE(offset + 12),
        bitsPerSample: body.readUInt16LE(offset + 22),
      }
    }
    if (id === 'data') {
      if (!fmt) throw new Error('data before fmt')
      const dataBytes = body.length - offset - 8
      return { ...fmt, declaredDataBytes: size, dataBytes, seconds: dataBytes / (fmt.sampleRate * fmt.channels * (fmt.bitsPerSample / 8)) }
    }
    offset += 8 + size
  }
  throw new Error('no data chunk')
}

export interface Mp3Info {
  frames: number
  sampleRate: number
  version: 'MPEG-1' | 'MPEG-2' | 'MPEG-2.5'
  seconds: number
}

const BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
const BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] }

/** Walks MPEG layer III frame headers from the first byte to the last; throws on garbage. */
export function parseMp3(body: Buffer): Mp3Info {
  let offset = 0
  let frames = 0
  let samples = 0
  let sampleRate = 0
  let versionBits = 0
  while (offset + 4 <= body.length) {
    const header = body.readUInt32BE(offset)
    if (header >>> 21 !== 0x7ff) throw new Error(`no frame sync at byte ${offset} of ${body.length}`)
    versionBits = (header >>> 19) & 3
    const layer = (header >>> 17) & 3
    if (layer !== 1) throw new Error('not layer III')
    const bitrateIndex = (header >>> 12) & 15
    const rateIndex = (header >>> 10) & 3
    const padding = (header >>> 9) & 1
    const mpeg1 = versionBits === 3
    const bitrate = (mpeg1 ? BITRATES_V1_L3 : BITRATES_V2_L3)[bitrateIndex] * 1000
    sampleRate = RATES[versionBits][rateIndex]
    const frameSamples = mpeg1 ? 1152 : 576
    const length = Math.floor(((frameSamples / 8) * bitrate) / sampleRate) + padding
    if (!bitrate || !length) throw new Error(`bad frame header at ${offset}`)
    offset += length
    frames++
    samples += frameSamples
  }
  if (frames === 0) throw new Error('no MP3 frames')
  return { frames, sampleRate, version: versionBits === 3 ? 'MPEG-1' : versionBits === 2 ? 'MPEG-2' : 'MPEG-2.5', seconds: samples / sampleRate }
}
