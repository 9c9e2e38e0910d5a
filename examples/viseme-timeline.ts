// Asks a running Triad for the viseme timeline of each text given, both ways a client can:
// POST /v1/tts with `visemes: true` (JSON: the audio as base64 and its timeline), and the binary
// answer's X-Synthesis-Id then GET /v1/tts/{id}/visemes. Prints, per text, the audio's duration
// read from the WAV itself beside the timeline. Run it with
//   TRIAD_URL=http://127.0.0.1:8080 node examples/viseme-timeline.ts "Papa is here." "你好，我是小小。"
// It calls through Triad's typed client (clients/typescript), so the bodies are checked by the compiler.
import { createTriadClient } from '../clients/typescript/index.ts'

const base = process.env.TRIAD_URL ?? 'http://127.0.0.1:8080'
const texts = process.argv.slice(2)
if (texts.length === 0) texts.push('Papa is here.', '你好，我是小小。')

/** Milliseconds of 16-bit mono PCM at 22,050 Hz after a WAV's 44-byte header. */
const wavMs = (wav: Buffer) => ((wav.length - 44) / 2 / 22_050) * 1000

const triad = createTriadClient({ baseUrl: base })

function refused(what: string, response: Response, error: unknown): never {
  throw new Error(`${what} answered ${response.status}: ${JSON.stringify(error)}`)
}

const results = []
for (const text of texts) {
  // One way: JSON, the audio and its timeline together.
  const asJson = await triad.POST('/v1/tts', { body: { text, format: 'wav', visemes: true } })
  if (!asJson.data) refused('POST /v1/tts', asJson.response, asJson.error)
  const json = asJson.data as { provider: string; duration_ms: number; audio: string; visemes: Array<{ viseme: string; start_ms: number; end_ms: number }> }
  // The other: the audio as it is (a second synthesis of the same text), its timeline by id.
  const binary = await triad.POST('/v1/tts', { body: { text, format: 'wav' }, parseAs: 'arrayBuffer' })
  if (!binary.data) refused('POST /v1/tts', binary.response, binary.error)
  const id = binary.response.headers.get('x-synthesis-id') ?? ''
  const audio = Buffer.from(binary.data)
  const timeline = await triad.GET('/v1/tts/{synthesis_id}/visemes', { params: { path: { synthesis_id: id } } })
  if (!timeline.data) refused('GET /v1/tts/{synthesis_id}/visemes', timeline.response, timeline.error)
  const byId = timeline.data
  results.push({
    text,
    provider: json.provider,
    json: { audio_duration_ms: Math.round(wavMs(Buffer.from(json.audio, 'base64'))), duration_ms: json.duration_ms, timeline_end_ms: json.visemes.at(-1)?.end_ms },
    by_id: { synthesis_id: id, audio_duration_ms: Math.round(wavMs(audio)), timeline_end_ms: byId.visemes.at(-1)?.end_ms },
    visemes: json.visemes,
  })
}
console.log(JSON.stringify(results, null, 1))
