// What Opus input costs the server in voice mode (issue 29, item 1): one opus-decoder (libopus in
// WebAssembly) per voice.start. Usage: node bench/avatar-opus-decoder.ts [--decoders 1000]
// Prints the time to instantiate a decoder (the module compiled once per process), the resident
// memory each live decoder adds, the time to decode a 20 ms packet of speech, and the bytes a
// second of that speech as 20 ms Opus packets at 24 kb/s against 16-bit PCM.
import { parseArgs } from 'node:util'
import { OpusDecoder } from 'opus-decoder'
import { opusPackets, silencePcm, speechPcm } from '../test/services/avatar/voice/audio.ts'

const { values } = parseArgs({ options: { decoders: { type: 'string', default: '1000' } } })
const count = Number(values.decoders)

const fresh = async () => {
  const decoder = new OpusDecoder({ sampleRate: 16_000, channels: 1 })
  await decoder.ready
  return decoder
}
// The first instantiates after compiling the module; the figures below are for the ones after.
const first = await fresh()

const [speech] = await speechPcm(['Hello avatar, how are you today? What is the weather like today?'])
const pcm = Buffer.concat([silencePcm(300), speech, silencePcm(300)])
const packets = opusPackets(pcm, { ms: 20 })
const seconds = pcm.length / 2 / 16_000
const opusBytes = packets.reduce((sum, packet) => sum + packet.length, 0)

const decodeStart = performance.now()
let decoded = 0
for (let round = 0; round < 20; round++) for (const packet of packets) decoded += first.decodeFrame(packet).samplesDecoded
const perPacketUs = ((performance.now() - decodeStart) / (20 * packets.length)) * 1000
first.free()
if (decoded !== 20 * packets.length * 320) throw new Error(`decoded ${decoded} samples`)

globalThis.gc?.()
const rssBefore = process.memoryUsage().rss
const live = []
const started = performance.now()
for (let index = 0; index < count; index++) live.push(await fresh())
const instantiateMs = (performance.now() - started) / count
const rssPerDecoderKb = (process.memoryUsage().rss - rssBefore) / count / 1024
for (const decoder of live) decoder.free()

console.log(`speech: ${seconds.toFixed(2)} s; PCM ${Math.round(pcm.length / seconds)} B/s; Opus (20 ms packets, 24 kb/s) ${Math.round(opusBytes / seconds)} B/s, ${packets.length} packets, ${Math.round(opusBytes / packets.length)} bytes each on average`)
console.log(`decode: ${perPacketUs.toFixed(1)} µs per 20 ms packet`)
console.log(`${count} live decoders: ${instantiateMs.toFixed(2)} ms each to instantiate, ${rssPerDecoderKb.toFixed(0)} kB resident each`)
