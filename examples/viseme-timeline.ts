// Asks a running Triad for the viseme timeline of each text given, both ways a client can:
// POST /v1/tts with `visemes: true` (JSON: the audio as base64 and its timeline), and the binary
// answer's X-Synthesis-Id then GET /v1/tts/{id}/visemes. Prints, per text, the audio's duration
// read from the WAV itself beside the timeline. Run it with
//   TRIAD_URL=http://127.0.0.1:8080 node examples/viseme-timeline.ts "Papa is here." "你好，我是小小。"
const base = process.env.TRIAD_URL ?? 'http://127.0.0.1:8080'
const texts = process.argv.slice(2)
if (texts.length === 0) texts.push('Papa is here.', '你好，我是小小。')

interface Span {
  viseme: string
  start_ms: number
  end_ms: number
}

/** Milliseconds of 16-bit mono PCM at 22,050 Hz after a WAV's 44-byte header. */
const wavMs = (wav: Buffer) => ((wav.length - 44) / 2 / 22_050) * 1000

async function post(body: object): Promise<Response> {
  const response = await fetch(`${base}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST /v1/tts answered ${response.status}: ${await response.text()}`)
  return response
}

const results = []
for (const text of texts) {
  // One way: JSON, the audio and its timeline together.
  const json = (await (await post({ text, format: 'wav', visemes: true })).json()) as { provider: string; duration_ms: number; audio: string; visemes: Span[] }
  // The other: the audio as it is (a second synthesis of the same text), its timeline by id.
  const binary = await post({ text, format: 'wav' })
  const id = binary.headers.get('x-synthesis-id')
  const audio = Buffer.from(await binary.arrayBuffer())
  const byId = (await (await fetch(`${base}/v1/tts/${id}/visemes`)).json()) as { visemes: Span[] }
  results.push({
    text,
    provider: json.provider,
    json: { audio_duration_ms: Math.round(wavMs(Buffer.from(json.audio, 'base64'))), duration_ms: json.duration_ms, timeline_end_ms: json.visemes.at(-1)?.end_ms },
    by_id: { synthesis_id: id, audio_duration_ms: Math.round(wavMs(audio)), timeline_end_ms: byId.visemes.at(-1)?.end_ms },
    visemes: json.visemes,
  })
}
console.log(JSON.stringify(results, null, 1))
