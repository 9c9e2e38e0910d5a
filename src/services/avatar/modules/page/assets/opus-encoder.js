// Opus for voice mode, where the browser has WebCodecs: the microphone's blocks go to an
// AudioEncoder at the AudioContext's own rate, and each packet it writes is sent as one binary
// frame (`"encoding":"opus"` in voice.start; docs/avatar-protocol.md, "Voice mode"): a fraction
// of the bytes of 16 kHz PCM. Opt-in: `/avatar?voiceEncoding=opus` or
// `<body data-voice-encoding="opus">`; PCM stays the default.

const BITRATE = 24000
const PACKET_MICROSECONDS = 20000

/** Whether the page was asked for Opus and the browser can encode it at `sampleRate`. */
export async function opusWanted(sampleRate) {
  const asked = new URLSearchParams(location.search).get('voiceEncoding') ?? document.body.dataset.voiceEncoding
  if (asked !== 'opus' || typeof AudioEncoder === 'undefined') return false
  const { supported } = await AudioEncoder.isConfigSupported(encoderConfig(sampleRate)).catch(() => ({ supported: false }))
  return supported === true
}

function encoderConfig(sampleRate) {
  return { codec: 'opus', sampleRate, numberOfChannels: 1, bitrate: BITRATE, opus: { format: 'opus', frameDuration: PACKET_MICROSECONDS, application: 'voip' } }
}

/** An encoder that sends each packet through `send(ArrayBuffer)`. */
export function createOpusSender(sampleRate, send, onError) {
  const encoder = new AudioEncoder({
    output(chunk) {
      const packet = new Uint8Array(chunk.byteLength)
      chunk.copyTo(packet)
      send(packet.buffer)
    },
    error: (error) => onError(`Opus encoding failed: ${error.message}`),
  })
  encoder.configure(encoderConfig(sampleRate))
  return {
    /** A block of the microphone (floats at `sampleRate`) captured at `time` seconds. */
    push(block, time) {
      if (encoder.state !== 'configured') return
      const data = new AudioData({ format: 'f32', sampleRate, numberOfFrames: block.length, numberOfChannels: 1, timestamp: Math.round(time * 1e6), data: block })
      encoder.encode(data)
      data.close()
    },
    /** Sends what the encoder still holds (the end of push-to-talk). */
    async flush() {
      if (encoder.state === 'configured') await encoder.flush().catch(() => {})
    },
    close() {
      if (encoder.state !== 'closed') encoder.close()
    },
  }
}
