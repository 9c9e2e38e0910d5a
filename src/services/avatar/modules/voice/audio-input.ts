import { OpusDecoder } from 'opus-decoder'
import { VAD_SAMPLE_RATE } from './turn-detector.ts'

// The microphone's binary frames in each encoding `voice.start` accepts, made into what the turn
// detector reads: 16 kHz mono floats (docs/avatar-protocol.md, "Voice mode").

const ENCODINGS = ['pcm16', 'opus'] as const
export type Encoding = (typeof ENCODINGS)[number]

/** One second of 16-bit 16 kHz audio: the largest PCM frame. */
const MAX_PCM_FRAME_BYTES = 32_000
/**
 * The largest Opus packet: 120 ms at 256 kb/s, the input buffer of opus-decoder's mono decoder
 * (libopus itself writes at most 1275 bytes per 20 ms frame; speech at 24-32 kb/s is 60-80 bytes).
 */
const MAX_OPUS_PACKET_BYTES = 3840
/** An Opus packet holds at most 120 ms (RFC 6716, section 3.2.5). */
const MAX_OPUS_PACKET_SAMPLES = 0.12 * VAD_SAMPLE_RATE
/** Input rates an encoder may have been fed, for `sampleRate` beside `"encoding":"opus"`. */
const ENCODER_RATES = { min: 8000, max: 192_000 }

export interface AudioInput {
  readonly encoding: Encoding
  /** Resolves once frames can be decoded (Opus: the WebAssembly decoder is instantiated). */
  readonly ready: Promise<void>
  /**
   * Checks a binary frame as it arrives: how many 16 kHz samples it holds, the sentence of its
   * error frame, or undefined for a frame dropped without a word (a run of bad packets is told once).
   */
  measure(frame: Buffer): number | string | undefined
  /** A measured frame as 16 kHz floats in −1…1; a string or undefined as for `measure`. */
  decode(frame: Buffer): Float32Array | string | undefined
  /** Frees the decoder; no frame is decoded after. */
  close(): void
}

/** Reads `encoding` and `sampleRate` of `voice.start`, or the sentence of its error frame. */
export function readAudioFormat(frame: Record<string, unknown>): { encoding: Encoding } | string {
  const { encoding = 'pcm16', sampleRate } = frame
  if (encoding === 'pcm16') return sampleRate === VAD_SAMPLE_RATE ? { encoding } : 'sampleRate must be 16000 (16-bit PCM, 16 kHz, mono)'
  if (encoding !== 'opus') {
    return `encoding must be one of ${ENCODINGS.map((known) => `"${known}"`).join(', ')} (default "pcm16"); got ${String(JSON.stringify(encoding)).slice(0, 40)}`
  }
  // Opus packets decode at any rate whatever the encoder was fed; sampleRate, if sent, is that rate, for the record.
  if (sampleRate !== undefined && (typeof sampleRate !== 'number' || !Number.isInteger(sampleRate) || sampleRate < ENCODER_RATES.min || sampleRate > ENCODER_RATES.max)) {
    return `sampleRate with "encoding":"opus" is the encoder's input rate, an integer from ${ENCODER_RATES.min} to ${ENCODER_RATES.max}, and may be left out`
  }
  return { encoding }
}

export function createAudioInput(encoding: Encoding): AudioInput {
  return encoding === 'opus' ? opusInput() : pcmInput()
}

function pcmInput(): AudioInput {
  return {
    encoding: 'pcm16',
    ready: Promise.resolve(),
    measure(frame) {
      if (frame.length % 2 !== 0) return `Audio frames must be 16-bit PCM: an even number of bytes (got ${frame.length})`
      if (frame.length === 0 || frame.length > MAX_PCM_FRAME_BYTES) {
        return `Audio frames must be at most ${MAX_PCM_FRAME_BYTES} bytes (1 s of 16 kHz audio) and not empty; got ${frame.length}`
      }
      return frame.length / 2
    },
    decode(frame) {
      const samples = new Float32Array(frame.length / 2)
      for (let index = 0; index < samples.length; index++) samples[index] = frame.readInt16LE(index * 2) / 32768
      return samples
    },
    close() {},
  }
}

/** Samples of one frame at 48 kHz, by the configuration number of the TOC byte (RFC 6716, section 3.1). */
function frameSamples48k(config: number): number {
  if (config < 12) return [480, 960, 1920, 2880][config & 3] // SILK-only: 10, 20, 40, 60 ms
  if (config < 16) return [480, 960][config & 1] // hybrid: 10, 20 ms
  return [120, 240, 480, 960][config & 3] // CELT-only: 2.5, 5, 10, 20 ms
}

/**
 * The length of an Opus packet in 16 kHz samples from its TOC byte and frame count (RFC 6716,
 * section 3.2), or undefined when it holds no frame or more than 120 ms. The rest of its
 * structure is libopus's to check.
 */
function opusPacketSamples(packet: Uint8Array): number | undefined {
  const perFrame = frameSamples48k(packet[0] >> 3) / 3
  const code = packet[0] & 3
  if (code !== 3) return (code === 0 ? 1 : 2) * perFrame
  if (packet.length < 2) return undefined
  const count = packet[1] & 0x3f
  const samples = count * perFrame
  return count > 0 && samples <= MAX_OPUS_PACKET_SAMPLES ? samples : undefined
}

const UNDECODABLE = 'An audio frame is not an Opus packet this server can decode; such frames are dropped (with "encoding":"opus", each binary frame is one raw Opus packet, as WebCodecs AudioEncoder or libopus write it)'

function opusInput(): AudioInput {
  // Straight to the detector's 16 kHz: libopus decodes any Opus stream at any of its rates.
  const decoder = new OpusDecoder({ sampleRate: VAD_SAMPLE_RATE, channels: 1 })
  let closed = false
  // A run of bad packets gets one error frame; a packet that decodes ends the run.
  let toldUndecodable = false
  const undecodable = () => {
    if (toldUndecodable) return undefined
    toldUndecodable = true
    return UNDECODABLE
  }

  return {
    encoding: 'opus',
    ready: decoder.ready,
    measure(frame) {
      // An empty packet would ask libopus to conceal a lost one, which it does with 120 ms of made-up sound.
      if (frame.length === 0 || frame.length > MAX_OPUS_PACKET_BYTES) {
        return `Opus packets must be 1 to ${MAX_OPUS_PACKET_BYTES} bytes, one packet per binary frame; got ${frame.length}`
      }
      return opusPacketSamples(frame) ?? undecodable()
    },
    decode(frame) {
      if (closed) return undefined
      const decoded = quietly(() => decoder.decodeFrame(frame))
      if (decoded.errors.length > 0 || decoded.samplesDecoded === 0) return undecodable()
      toldUndecodable = false
      return decoded.channelData[0]
    },
    close() {
      if (closed) return
      closed = true
      // Frees the decoder's state inside its WebAssembly memory; the memory itself (about 90 kB
      // resident) goes with the decoder object once nothing holds it.
      void decoder.ready.then(() => decoder.free(), () => {})
    },
  }
}

/**
 * Runs `decode` with console.error silenced: opus-decoder prints every packet libopus refuses,
 * so a client sending garbage would write one line to the server's stderr per frame. The error
 * reaches the client (once per run) and the decoder's result carries it; nothing else runs
 * while this synchronous call does.
 */
function quietly<T>(decode: () => T): T {
  const print = console.error
  console.error = () => {}
  try {
    return decode()
  } finally {
    console.error = print
  }
}
