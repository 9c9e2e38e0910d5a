import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer } from 'node:net'
import { describe, it } from 'node:test'
import { loadConfig } from '../../../../src/config.ts'
import { createEspeakProvider, findVoice } from '../../../../src/services/avatar/providers/tts/index.ts'
import { createFakeTtsProvider } from '../../../../src/services/avatar/providers/tts/tts.fake.ts'
import { buildTestApp, type Cleanup, engineIndependent } from '../../../helpers/build-app.ts'
import { parseMp3, parseWav } from './audio.ts'
import { startFakeEdge } from './fake-edge-server.ts'

const ENGLISH = 'Hello there, how are you today? I am the avatar, and I speak without any network.'
const CHINESE = '你好，很高兴见到你。今天天气不错。'

function speechApp(t: Cleanup, env: Record<string, string> = {}) {
  return buildTestApp(t, { services: ['avatar'], env })
}

async function tts(app: Awaited<ReturnType<typeof speechApp>>['app'], payload: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/v1/tts', payload })
}

describe('GET /v1/tts/voices', { skip: engineIndependent }, () => {
  it('lists the four voices and names the local provider that really runs', async (t) => {
    const { app } = await speechApp(t)
    const response = await app.inject({ method: 'GET', url: '/v1/tts/voices' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), {
      provider: 'espeak',
      available: true,
      voices: [
        { id: 'zh-CN-XiaoxiaoNeural', name: 'Xiaoxiao', locale: 'zh-CN', gender: 'Female' },
        { id: 'zh-CN-YunxiNeural', name: 'Yunxi', locale: 'zh-CN', gender: 'Male' },
        { id: 'en-US-JennyNeural', name: 'Jenny', locale: 'en-US', gender: 'Female' },
        { id: 'en-US-GuyNeural', name: 'Guy', locale: 'en-US', gender: 'Male' },
      ],
    })
  })
})

describe('POST /v1/tts with the local espeak-ng provider', { skip: engineIndependent }, () => {
  it('answers MP3 by default: valid MPEG-2 layer III frames from the first byte to the last', async (t) => {
    const { app } = await speechApp(t)
    const response = await tts(app, { text: ENGLISH })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'audio/mpeg')
    assert.equal(response.headers['x-tts-provider'], 'espeak')
    const mp3 = parseMp3(response.rawPayload)
    assert.equal(mp3.version, 'MPEG-2')
    assert.equal(mp3.sampleRate, 22050)
    assert.ok(mp3.seconds > 3 && mp3.seconds < 12, `${mp3.seconds} s`)
  })

  it('answers WAV with an exact header for a short text, as long as the MP3 of the same text', async (t) => {
    const { app } = await speechApp(t)
    const wavResponse = await tts(app, { text: ENGLISH, format: 'wav', voice: 'en-US-GuyNeural' })
    assert.equal(wavResponse.statusCode, 200)
    assert.equal(wavResponse.headers['content-type'], 'audio/wav')
    assert.equal(Number(wavResponse.headers['content-length']), wavResponse.rawPayload.length)
    const wav = parseWav(wavResponse.rawPayload)
    assert.deepEqual([wav.format, wav.channels, wav.sampleRate, wav.bitsPerSample], [1, 1, 22050, 16])
    assert.equal(wav.declaredDataBytes, wav.dataBytes)
    const mp3 = parseMp3((await tts(app, { text: ENGLISH, format: 'mp3', voice: 'en-US-GuyNeural' })).rawPayload)
    // The encoder adds under a tenth of a second of padding.
    assert.ok(Math.abs(mp3.seconds - wav.seconds) < 0.2, `mp3 ${mp3.seconds} s vs wav ${wav.seconds} s`)
  })

  it('really changes the duration with rate, across the whole range', async (t) => {
    const { app } = await speechApp(t)
    const seconds = async (rate: string) => {
      const response = await tts(app, { text: ENGLISH, format: 'wav', rate })
      assert.equal(response.statusCode, 200, response.statusCode === 200 ? '' : response.body)
      return parseWav(response.rawPayload).seconds
    }
    const normal = await seconds('+0%')
    const slow = await seconds('-50%')
    const fast = await seconds('+100%')
    const bitFaster = await seconds('+20%')
    assert.ok(slow > normal * 1.6, `-50%: ${slow} s vs ${normal} s`)
    assert.ok(fast < normal * 0.6, `+100%: ${fast} s vs ${normal} s`)
    assert.ok(bitFaster < normal * 0.95 && bitFaster > fast, `+20%: ${bitFaster} s`)
  })

  it('speaks Chinese as Mandarin syllables, not spelled out, and picks a Mandarin voice by default', async (t) => {
    const { app } = await speechApp(t)
    const mandarin = await tts(app, { text: CHINESE, format: 'wav', voice: 'zh-CN-XiaoxiaoNeural' })
    const byDefault = await tts(app, { text: CHINESE, format: 'wav' })
    const english = await tts(app, { text: CHINESE, format: 'wav', voice: 'en-US-JennyNeural' })
    // Fifteen syllables: a few seconds in Mandarin; an English voice names each character instead.
    const seconds = parseWav(mandarin.rawPayload).seconds
    assert.ok(seconds > 2 && seconds < 7, `${seconds} s`)
    assert.ok(parseWav(english.rawPayload).seconds > seconds * 1.5)
    // The female variants add random breath noise, so compare lengths, not bytes.
    assert.equal(parseWav(byDefault.rawPayload).dataBytes, parseWav(mandarin.rawPayload).dataBytes, 'the default voice for Chinese text is Xiaoxiao')
  })

  it('gives each of the four voices its own sound', async (t) => {
    const { app } = await speechApp(t)
    const digests = new Set<string>()
    for (const voice of ['zh-CN-XiaoxiaoNeural', 'zh-CN-YunxiNeural', 'en-US-JennyNeural', 'en-US-GuyNeural']) {
      const response = await tts(app, { text: voice.startsWith('zh') ? CHINESE : ENGLISH, format: 'wav', voice })
      assert.equal(response.statusCode, 200)
      digests.add(createHash('sha256').update(response.rawPayload).digest('hex'))
    }
    assert.equal(digests.size, 4)
  })

  it('speaks a text that starts with a dash instead of reading it as an espeak option', async (t) => {
    const { app } = await speechApp(t)
    const response = await tts(app, { text: '--help me please', format: 'wav' })
    assert.equal(response.statusCode, 200)
    assert.ok(parseWav(response.rawPayload).seconds > 0.5)
  })

  it('streams a 5,000-character text in chunks with a streaming WAV header, while other requests are served', async (t) => {
    const { app } = await speechApp(t)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    assert.ok(address && typeof address === 'object')
    const base = `http://127.0.0.1:${address.port}`
    const sentence = 'The avatar keeps talking while the audio streams out in pieces. '
    const text = sentence.repeat(Math.ceil(5000 / sentence.length)).slice(0, 5000)
    const started = performance.now()
    const response = await fetch(`${base}/v1/tts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text, format: 'wav' }),
    })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('transfer-encoding'), 'chunked')
    assert.equal(response.headers.get('content-length'), null)
    const reader = response.body?.getReader()
    assert.ok(reader)
    const parts: Uint8Array[] = []
    let voicesAnsweredAt = 0
    let chunks = 0
    // Ask for something else as soon as the first audio arrives: the event loop must be free.
    const first = await reader.read()
    assert.ok(first.value)
    parts.push(first.value)
    const other = fetch(`${base}/v1/tts/voices`).then(async (reply) => {
      assert.equal(reply.status, 200)
      await reply.json()
      voicesAnsweredAt = performance.now()
    })
    while (true) {
      const { done, value } = await reader.read()
      if (done) break
      parts.push(value)
      chunks++
    }
    const finishedAt = performance.now()
    await other
    assert.ok(chunks > 10, `${chunks} chunks`)
    assert.ok(
      voicesAnsweredAt < finishedAt,
      `voices answered ${(voicesAnsweredAt - started).toFixed(0)} ms, audio ended ${(finishedAt - started).toFixed(0)} ms`,
    )
    const wav = parseWav(Buffer.concat(parts))
    assert.equal(wav.declaredDataBytes, 0xffffffff - 36)
    assert.equal(wav.dataBytes % 2, 0)
    // 5,000 characters is several minutes of speech.
    assert.ok(wav.seconds > 180, `${wav.seconds} s`)
  })

  it('runs concurrent syntheses side by side: a second request gets audio before the first has finished', async (t) => {
    const { app } = await speechApp(t, { AVATAR_TTS_THREADS: '2' })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    assert.ok(address && typeof address === 'object')
    // One long segment each (400 characters of Mandarin, about 100 s of MP3 to encode).
    const text = '今天天气很好，我们一起去公园散步吧。'.repeat(40).slice(0, 400)
    const timeline = async () => {
      const response = await fetch(`http://127.0.0.1:${address.port}/v1/tts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      })
      let first = 0
      for await (const _chunk of response.body ?? []) first ||= performance.now()
      return { first, last: performance.now() }
    }
    const [one, two] = await Promise.all([timeline(), timeline()])
    assert.ok(two.first < one.last && one.first < two.last, `first: ${JSON.stringify(one)}, second: ${JSON.stringify(two)}`)
  })
})

describe('local speech threads warm at start (AVATAR_TTS_WARM)', { skip: engineIndependent }, () => {
  const EVERY_VOICE = ['cmn+f3', 'cmn+m3', 'en-us+f3', 'en-us+m3']

  it('starts every thread at once and has each speak every voice before it takes a task', async (t) => {
    const provider = createEspeakProvider({ threads: 2, warm: true })
    t.after(() => provider.close())
    await provider.ready?.()
    const warmed = await provider.warmedVoices()
    assert.deepEqual(
      warmed.map((voices) => [...voices].sort()),
      [EVERY_VOICE, EVERY_VOICE],
    )
    const voice = findVoice('en-US-GuyNeural')
    assert.ok(voice)
    const stream = await provider.synthesize({ text: ENGLISH, voice, ratePercent: 0, format: 'wav' })
    let bytes = 0
    for await (const chunk of stream.chunks) bytes += chunk.length
    assert.ok(bytes > 44 + 22050, `${bytes} bytes of WAV`)
  })

  it('starts no thread before the first synthesis when it is off', async (t) => {
    const provider = createEspeakProvider({ threads: 2, warm: false })
    t.after(() => provider.close())
    await provider.ready?.()
    assert.deepEqual(await provider.warmedVoices(), [])
  })

  it('is on by default; an app built with it warms its threads when it gets ready, then speaks', async (t) => {
    const { app } = await speechApp(t, { AVATAR_TTS_WARM: 'true', AVATAR_TTS_THREADS: '1' })
    await app.ready()
    const response = await tts(app, { text: ENGLISH, format: 'wav' })
    assert.equal(response.statusCode, 200)
    assert.equal(loadConfig({}).avatar.speech.warm, true)
  })
})

describe('POST /v1/tts validation', { skip: engineIndependent }, () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['missing text', { voice: 'en-US-GuyNeural' }, /text/],
    ['text that is not a string', { text: { words: 'hi' } }, /text/],
    ['empty text', { text: '' }, /text must not be empty/],
    ['blank text', { text: '   \n ' }, /text must not be empty/],
    ['text over 5,000 characters', { text: 'a'.repeat(5001) }, /at most 5000 characters/],
    ['an unknown voice', { text: 'hi', voice: 'en-GB-RyanNeural' }, /zh-CN-XiaoxiaoNeural, zh-CN-YunxiNeural, en-US-JennyNeural, en-US-GuyNeural/],
    ['an unknown format', { text: 'hi', format: 'ogg' }, /format must be one of mp3, wav/],
    ['a format in capitals', { text: 'hi', format: 'MP3' }, /mp3, wav/],
    ['a rate without a sign', { text: 'hi', rate: '10%' }, /signed percentage/],
    ['a rate without a percent sign', { text: 'hi', rate: '+10' }, /signed percentage/],
    ['a rate in words', { text: 'hi', rate: 'fast' }, /signed percentage/],
    ['a rate of four digits', { text: 'hi', rate: '+1000%' }, /signed percentage/],
    ['a rate below -50%', { text: 'hi', rate: '-51%' }, /between -50% and \+100%/],
    ['a rate above +100%', { text: 'hi', rate: '+101%' }, /between -50% and \+100%/],
    ['an unknown field', { text: 'hi', pitch: '+5Hz' }, /pitch/],
  ]
  for (const [name, payload, detail] of cases) {
    it(`refuses ${name} with 400 {detail}`, async (t) => {
      const { app } = await speechApp(t)
      const response = await tts(app, payload)
      assert.equal(response.statusCode, 400, response.statusCode === 200 ? 'got audio' : response.body)
      const body = response.json()
      assert.deepEqual(Object.keys(body), ['detail'])
      assert.match(body.detail, detail)
    })
  }

  it('refuses a body that is not JSON with 400 {detail}', async (t) => {
    const { app } = await speechApp(t)
    const response = await app.inject({ method: 'POST', url: '/v1/tts', headers: { 'content-type': 'application/json' }, payload: '{"text":' })
    assert.equal(response.statusCode, 400)
    assert.equal(typeof response.json().detail, 'string')
  })

  it('accepts exactly 5,000 characters and both ends of the rate range', async (t) => {
    const fake = createFakeTtsProvider()
    const { app } = await buildTestApp(t, { services: ['avatar'], deps: { avatar: { tts: fake } } })
    for (const payload of [{ text: 'a'.repeat(5000) }, { text: 'hi', rate: '-50%' }, { text: 'hi', rate: '+100%' }, { text: 'hi', rate: '-0%' }]) {
      const response = await tts(app, payload)
      assert.equal(response.statusCode, 200, response.statusCode === 200 ? '' : response.body)
    }
    assert.deepEqual(
      fake.requests.map((request) => request.ratePercent),
      [0, -50, 100, 0],
    )
  })
})

describe('POST /v1/tts provider failures', { skip: engineIndependent }, () => {
  it('answers 502 {detail} when synthesis fails before any audio', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'], deps: { avatar: { tts: createFakeTtsProvider({ fail: 'before' }) } } })
    const response = await tts(app, { text: 'hello' })
    assert.equal(response.statusCode, 502)
    assert.match(response.json().detail, /^Speech synthesis failed/)
  })

  it('cuts the stream short (no silent truncation) when synthesis fails mid-way, and keeps serving', async (t) => {
    const fake = createFakeTtsProvider({ fail: 'during' })
    const { app } = await buildTestApp(t, { services: ['avatar'], deps: { avatar: { tts: fake } } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    assert.ok(address && typeof address === 'object')
    const url = `http://127.0.0.1:${address.port}`
    const response = await fetch(`${url}/v1/tts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hello world' }),
    })
    assert.equal(response.status, 200)
    await assert.rejects(response.arrayBuffer())
    const voices = await fetch(`${url}/v1/tts/voices`)
    assert.equal(voices.status, 200)
  })

  it('speaks through Edge when it answers: the Sec-MS-GEC token, the voice and the rate in SSML, its MP3 streamed back', async (t) => {
    // Any valid MP3 will do as Edge's answer; take one the local voices made.
    const local = await speechApp(t)
    const mp3 = (await tts(local.app, { text: 'Edge stand-in audio.' })).rawPayload
    const edge = await startFakeEdge(mp3)
    t.after(() => edge.close())
    const { app } = await speechApp(t, { AVATAR_TTS_PROVIDER: 'edge', AVATAR_TTS_EDGE_URL: edge.url })
    const voices = (await app.inject({ method: 'GET', url: '/v1/tts/voices' })).json()
    assert.equal(voices.provider, 'edge')
    assert.equal(voices.message, undefined)
    const response = await tts(app, { text: 'Tom & Jerry <3', voice: 'zh-CN-YunxiNeural', rate: '-20%' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['x-tts-provider'], 'edge')
    assert.ok(response.rawPayload.equals(mp3), 'the MP3 Edge sent, unchanged and complete')
    const connection = edge.connections.at(-1)
    assert.ok(connection)
    assert.match(connection.query.get('Sec-MS-GEC') ?? '', /^[0-9A-F]{64}$/)
    assert.equal(connection.query.get('TrustedClientToken'), '6A5AA1D4EAFF4E9FB37E23D68491D6F4')
    const [config, ssml] = connection.messages
    assert.match(config, /Path:speech\.config/)
    assert.match(config, /audio-24khz-48kbitrate-mono-mp3/)
    assert.match(ssml, /<voice name='Microsoft Server Speech Text to Speech Voice \(zh-CN, YunxiNeural\)'>/)
    assert.match(ssml, /rate='-20%'/)
    assert.match(ssml, /Tom &#38; Jerry &#60;3/)
    // Edge sends MP3 only: WAV is spoken by the local voices.
    const wav = await tts(app, { text: 'As a wave file.', format: 'wav' })
    assert.equal(wav.headers['x-tts-provider'], 'espeak')
    assert.ok(parseWav(wav.rawPayload).seconds > 0.5)
  })

  it('falls back to the local voices when Edge cannot be reached, and the voices endpoint says so', async (t) => {
    // A port nobody listens on: connections are refused at once.
    const closed = await new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
      })
    })
    const { app } = await speechApp(t, { AVATAR_TTS_PROVIDER: 'edge', AVATAR_TTS_EDGE_URL: `ws://127.0.0.1:${closed}/tts`, AVATAR_TTS_EDGE_TIMEOUT: '2s' })
    const response = await tts(app, { text: 'Hello from the fallback.' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'audio/mpeg')
    assert.equal(response.headers['x-tts-provider'], 'espeak')
    assert.ok(parseMp3(response.rawPayload).seconds > 0.5)
    const voices = (await app.inject({ method: 'GET', url: '/v1/tts/voices' })).json()
    assert.equal(voices.provider, 'espeak')
    assert.equal(voices.available, true)
    assert.match(voices.message, /Edge voices unreachable/)
    assert.equal(voices.voices.length, 4)
  })

  it('tries Edge again a minute after it failed, and uses it once it answers', async (t) => {
    const local = await speechApp(t)
    const mp3 = (await tts(local.app, { text: 'Edge is back.' })).rawPayload
    const edge = await startFakeEdge(mp3, { refuseFirst: 1 })
    t.after(() => edge.close())
    const { app, clock } = await speechApp(t, { AVATAR_TTS_PROVIDER: 'edge', AVATAR_TTS_EDGE_URL: edge.url })
    assert.equal((await tts(app, { text: 'Hello.' })).headers['x-tts-provider'], 'espeak')
    assert.equal(edge.attempts, 1)
    clock.advance(30_000)
    assert.equal((await tts(app, { text: 'Hello.' })).headers['x-tts-provider'], 'espeak')
    assert.equal(edge.attempts, 1, 'no new attempt within the minute')
    clock.advance(31_000)
    const back = await tts(app, { text: 'Hello.' })
    assert.equal(back.headers['x-tts-provider'], 'edge')
    assert.ok(back.rawPayload.equals(mp3))
  })
})
