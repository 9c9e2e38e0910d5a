import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { NOT_CONFIGURED_MESSAGE } from '../../../../src/services/avatar/providers/asr/none.asr.ts'
import { pocketsphinxInstalled } from '../../../../src/services/avatar/providers/asr/pocketsphinx.asr.ts'
import { buildTestApp, type Cleanup, engineIndependent } from '../../../helpers/build-app.ts'
import { multipartForm, postAsr } from '../helpers.ts'
import { parseWav } from '../speech/audio.ts'
import { fakeOpenAi } from './fake-transcription-server.ts'

type App = Awaited<ReturnType<typeof buildTestApp>>['app']

const POCKETSPHINX = { command: 'pocketsphinx_continuous', modelDir: '/usr/share/pocketsphinx/model/en-us' }
const hasPocketsphinx = pocketsphinxInstalled(POCKETSPHINX)
const hasSox = (() => {
  try {
    execFileSync('sox', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

async function speak(app: App, text: string, format: 'wav' | 'mp3' = 'wav'): Promise<Buffer> {
  const response = await app.inject({ method: 'POST', url: '/v1/tts', payload: { text, format, voice: 'en-US-GuyNeural' } })
  assert.equal(response.statusCode, 200)
  return response.rawPayload
}

function noRecognizerApp(t: Cleanup) {
  return buildTestApp(t, { services: ['avatar'], env: { AVATAR_ASR_POCKETSPHINX_MODEL: '/nonexistent/model' } })
}

describe('speech recognition with nothing configured', { skip: engineIndependent }, () => {
  it('says it is unavailable and what to configure, and POST /v1/asr answers 503 with the same message', async (t) => {
    const { app } = await noRecognizerApp(t)
    const status = await app.inject({ method: 'GET', url: '/v1/asr/status' })
    assert.equal(status.statusCode, 200)
    assert.deepEqual(status.json(), { provider: 'none', available: false, message: NOT_CONFIGURED_MESSAGE })
    assert.match(NOT_CONFIGURED_MESSAGE, /AVATAR_ASR_API_KEY/)
    const response = await postAsr(app, { file: { bytes: await speak(app, 'hello'), name: 'a.wav', type: 'audio/wav' } })
    assert.equal(response.statusCode, 503)
    assert.deepEqual(response.json(), { detail: NOT_CONFIGURED_MESSAGE })
  })
})

describe('speech recognition through an OpenAI-compatible API', { skip: engineIndependent }, () => {
  it('sends the upload with the model and language, and answers text, language and duration in seconds', async (t) => {
    const fake = await fakeOpenAi(t, { status: 200, body: { text: ' 你好，世界 ' } })
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_ASR_API_KEY: 'sk-test', AVATAR_ASR_BASE_URL: fake.baseUrl } })
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/asr/status' })).json(), {
      provider: 'openai',
      available: true,
      message: 'OpenAI-compatible transcription with whisper-1',
    })
    const mp3 = await speak(app, 'Hello there, this is a test of the recognizer.', 'mp3')
    const response = await postAsr(app, { file: { bytes: mp3, name: 'speech.mp3', type: 'audio/mpeg' }, language: 'zh' })
    assert.equal(response.statusCode, 200, response.body)
    const body = response.json()
    assert.equal(body.text, '你好，世界')
    assert.equal(body.language, 'zh')
    assert.equal(typeof body.duration, 'number')
    assert.ok(body.duration > 1.5 && body.duration < 6, `${body.duration}`)
    assert.deepEqual(fake.seen, [
      { authorization: 'Bearer sk-test', model: 'whisper-1', language: 'zh', format: 'json', bytes: mp3.length, filename: 'speech.mp3' },
    ])
  })

  it('guesses the language from the transcript when none was asked for', async (t) => {
    const fake = await fakeOpenAi(t, { status: 200, body: { text: 'good morning' } })
    const { app } = await buildTestApp(t, {
      services: ['avatar'],
      env: { AVATAR_ASR_API_KEY: 'sk-test', AVATAR_ASR_BASE_URL: fake.baseUrl, AVATAR_ASR_MODEL: 'whisper-large-v3' },
    })
    const response = await postAsr(app, { file: { bytes: await speak(app, 'good morning'), name: 'a.wav', type: 'audio/wav' } })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().language, 'en')
    assert.equal(fake.seen[0].model, 'whisper-large-v3')
    assert.equal(fake.seen[0].language, undefined)
  })

  it('answers 502 {detail} when the API fails', async (t) => {
    const fake = await fakeOpenAi(t, { status: 500, body: { error: { message: 'boom' } } })
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_ASR_API_KEY: 'sk-test', AVATAR_ASR_BASE_URL: fake.baseUrl } })
    const response = await postAsr(app, { file: { bytes: await speak(app, 'hello'), name: 'a.wav', type: 'audio/wav' } })
    assert.equal(response.statusCode, 502)
    assert.match(response.json().detail, /^Speech recognition failed: the transcription API failed \(HTTP 500\)/)
  })
})

describe('speech recognition with local pocketsphinx', { skip: engineIndependent || (!hasPocketsphinx && 'pocketsphinx is not installed') }, () => {
  it('is chosen when installed and transcribes English WAV (any rate) with its duration', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const status = (await app.inject({ method: 'GET', url: '/v1/asr/status' })).json()
    assert.equal(status.provider, 'pocketsphinx')
    assert.equal(status.available, true)
    const wav = await speak(app, 'Hello world. What is the weather today?')
    const response = await postAsr(app, { file: { bytes: wav, name: 'hello.wav', type: 'audio/wav' }, language: 'en' })
    assert.equal(response.statusCode, 200, response.body)
    const body = response.json()
    assert.equal(body.language, 'en')
    // Synthetic speech is recognised loosely; it must still produce words.
    assert.match(body.text, /[a-z]+/)
    assert.ok(Math.abs(body.duration - parseWav(wav).seconds) < 0.05, `${body.duration} vs ${parseWav(wav).seconds}`)
  })

  it('refuses language=zh with 400 saying the local engine is English only', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const response = await postAsr(app, { file: { bytes: await speak(app, 'hello'), name: 'a.wav', type: 'audio/wav' }, language: 'zh' })
    assert.equal(response.statusCode, 400)
    assert.match(response.json().detail, /English only.*AVATAR_ASR_API_KEY/)
  })

  it('decodes Ogg Vorbis through sox', { skip: !hasSox && 'sox is not installed' }, async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const dir = mkdtempSync(join(tmpdir(), 'asr-test-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    writeFileSync(join(dir, 'in.wav'), await speak(app, 'Good morning to you.'))
    execFileSync('sox', [join(dir, 'in.wav'), join(dir, 'out.ogg')])
    const response = await postAsr(app, { file: { bytes: readFileSync(join(dir, 'out.ogg')), name: 'a.ogg', type: 'audio/ogg' } })
    assert.equal(response.statusCode, 200, response.body)
    assert.ok(response.json().duration > 0.5)
  })

  it('decodes MP3 itself, with its duration', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const mp3 = await speak(app, 'Hello there, how are you?', 'mp3')
    const response = await postAsr(app, { file: { bytes: mp3, name: 'a.mp3', type: 'audio/mpeg' }, language: 'en-US' })
    assert.equal(response.statusCode, 200, response.body)
    const wav = parseWav(await speak(app, 'Hello there, how are you?'))
    // The MP3 encoder pads by a fraction of a frame at each end.
    assert.ok(Math.abs(response.json().duration - wav.seconds) < 0.15, `${response.json().duration} vs ${wav.seconds}`)
    assert.equal(response.json().language, 'en')
  })
})

describe('POST /v1/asr refuses bad uploads with 400 {detail}', { skip: engineIndependent }, () => {
  // A recognizer that always works, so only the upload decides.
  const env = { AVATAR_ASR_API_KEY: 'sk-unused', AVATAR_ASR_BASE_URL: 'http://127.0.0.1:9/v1' }
  const cases: Array<[string, () => Promise<{ payload: Buffer | string; headers: Record<string, string> }>, RegExp]> = [
    ['a form without a file', () => multipartForm({ language: 'en' }), /file is required/],
    ['a file under another field name', () => multipartForm({ audio: { bytes: new Uint8Array([1, 2, 3]), name: 'a.wav', type: 'audio/wav' } }), /file is required/],
    ['an empty file', () => multipartForm({ file: { bytes: new Uint8Array(0), name: 'a.wav', type: 'audio/wav' } }), /file is empty/],
    ['a text file', () => multipartForm({ file: { bytes: new TextEncoder().encode('just some words, not audio'), name: 'a.wav', type: 'audio/wav' } }), /not audio/],
    [
      'a PNG image',
      () =>
        multipartForm({ file: { bytes: Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'), name: 'a.png', type: 'image/png' } }),
      /not audio|accepted formats/,
    ],
    ['a JSON body', async () => ({ payload: JSON.stringify({ file: 'x' }), headers: { 'content-type': 'application/json' } }), /multipart\/form-data/],
    [
      'a truncated multipart body',
      async () => ({
        payload: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF',
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      }),
      /malformed|file/,
    ],
  ]
  for (const [name, build, detail] of cases) {
    it(`refuses ${name}`, async (t) => {
      const { app } = await buildTestApp(t, { services: ['avatar'], env })
      const response = await app.inject({ method: 'POST', url: '/v1/asr', ...(await build()) })
      assert.equal(response.statusCode, 400, response.body)
      assert.deepEqual(Object.keys(response.json()), ['detail'])
      assert.match(response.json().detail, detail)
    })
  }

  it('refuses a language that is not a language code', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'], env })
    const response = await postAsr(app, { file: { bytes: await speak(app, 'hi'), name: 'a.wav', type: 'audio/wav' }, language: 'english please' })
    assert.equal(response.statusCode, 400)
    assert.match(response.json().detail, /language must be a language code/)
  })

  it('refuses a file over 25 MB without reading it all into a 500', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'], env })
    const big = new Uint8Array(25 * 1024 * 1024 + 1)
    big.set(await speak(app, 'hi'))
    const response = await postAsr(app, { file: { bytes: big, name: 'big.wav', type: 'audio/wav' } })
    assert.equal(response.statusCode, 400)
    assert.match(response.json().detail, /larger than 25 MB/)
  })
})
