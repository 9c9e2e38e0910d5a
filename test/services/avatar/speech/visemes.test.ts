import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type VisemeSpan, VISEMES, visemesOfPhoneme, visemeTimeline } from '../../../../src/services/avatar/modules/speech/index.ts'
import { buildTestApp, engineIndependent, type TestApp } from '../../../helpers/build-app.ts'
import { parseWav } from './audio.ts'
import { startFakeEdge } from './fake-edge-server.ts'

// One app for the local-voice cases: its worker threads load espeak-ng once.
let shared: TestApp | undefined
const cleanups: Array<() => Promise<void> | void> = []
before(async () => {
  shared = await buildTestApp({ after: (fn) => cleanups.push(fn) }, { services: ['avatar'] })
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})
function speechApp(): TestApp {
  assert.ok(shared)
  return shared
}

/** POST /v1/tts with `visemes: true`, as WAV so the audio's exact duration can be read back. */
async function speakJson(body: Record<string, unknown>) {
  const { app } = speechApp()
  const response = await app.inject({ method: 'POST', url: '/v1/tts', payload: { format: 'wav', visemes: true, ...body } })
  assert.equal(response.statusCode, 200, response.body)
  assert.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  const json = response.json()
  const audioMs = parseWav(Buffer.from(json.audio, 'base64')).seconds * 1000
  return { json, audioMs, visemes: json.visemes as VisemeSpan[] }
}

/** The spans start at 0, follow each other without gaps, and use only the 15 visemes. */
function assertWellFormed(visemes: VisemeSpan[]) {
  assert.ok(visemes.length > 0)
  assert.equal(visemes[0].start_ms, 0)
  for (const [index, span] of visemes.entries()) {
    assert.ok(VISEMES.includes(span.viseme), span.viseme)
    assert.ok(span.end_ms > span.start_ms, JSON.stringify(span))
    if (index > 0) assert.equal(span.start_ms, visemes[index - 1].end_ms)
    if (index > 0) assert.notEqual(span.viseme, visemes[index - 1].viseme, 'equal neighbours merge')
  }
}

describe('viseme timelines from espeak-ng phoneme events', { skip: engineIndependent }, () => {
  it('covers the English audio to within 50 ms, rests at both ends, and closes the lips for "papa"', async () => {
    const { json, audioMs, visemes } = await speakJson({ text: 'Papa is here.' })
    assertWellFormed(visemes)
    assert.ok(Math.abs((visemes.at(-1)?.end_ms ?? Number.NaN) - audioMs) <= 50, `timeline ends at ${visemes.at(-1)?.end_ms} ms, audio lasts ${audioMs} ms`)
    assert.ok(Math.abs(json.duration_ms - audioMs) <= 50)
    assert.equal(visemes[0].viseme, 'sil', 'silence before the first phoneme')
    assert.equal(visemes.at(-1)?.viseme, 'sil', 'silence after the last one')
    const shapes = visemes.map((span) => span.viseme)
    // p-a-p-a: lips closed, open, closed, open.
    const firstPP = shapes.indexOf('PP')
    assert.ok(firstPP >= 0, shapes.join(' '))
    assert.equal(shapes[firstPP + 1], 'aa', shapes.join(' '))
    assert.equal(shapes[firstPP + 2], 'PP', shapes.join(' '))
    assert.ok(shapes.includes('kk'), 'the h of "here"')
    assert.match(json.synthesis_id, /^syn_[0-9a-f]{24}$/)
    assert.equal(json.provider, 'espeak')
  })

  it('times a Chinese sentence as well, with Mandarin initials mapped to their shapes', async () => {
    const { audioMs, visemes } = await speakJson({ text: '我们是朋友，你好。' })
    assertWellFormed(visemes)
    assert.ok(Math.abs((visemes.at(-1)?.end_ms ?? Number.NaN) - audioMs) <= 50, `timeline ends at ${visemes.at(-1)?.end_ms} ms, audio lasts ${audioMs} ms`)
    assert.equal(visemes.at(-1)?.viseme, 'sil')
    const shapes = new Set(visemes.map((span) => span.viseme))
    // 们 m, 朋 p: lips closed; 是 ʂ: retroflex; 你 n; 友 j-ou; 好 x-ɑu.
    for (const shape of ['PP', 'CH', 'nn', 'ou', 'kk', 'aa'] as const) assert.ok(shapes.has(shape), `${shape} in ${[...shapes].join(' ')}`)
  })

  it('keeps the timeline of a binary answer under its X-Synthesis-Id, until AVATAR_TTS_TIMELINE_TTL', async () => {
    const { app, clock } = speechApp()
    const response = await app.inject({ method: 'POST', url: '/v1/tts', payload: { text: 'Papa.', format: 'wav' } })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'audio/wav')
    const id = String(response.headers['x-synthesis-id'])
    assert.match(id, /^syn_[0-9a-f]{24}$/)
    const timeline = await app.inject({ method: 'GET', url: `/v1/tts/${id}/visemes` })
    assert.equal(timeline.statusCode, 200)
    const body = timeline.json()
    assert.equal(body.synthesis_id, id)
    assert.equal(body.provider, 'espeak')
    assertWellFormed(body.visemes)
    assert.ok(Math.abs(body.duration_ms - parseWav(response.rawPayload).seconds * 1000) <= 50)
    assert.ok(body.visemes.some((span: VisemeSpan) => span.viseme === 'PP'))

    clock.advance(10 * 60_000 + 1)
    const expired = await app.inject({ method: 'GET', url: `/v1/tts/${id}/visemes` })
    assert.equal(expired.statusCode, 404)
    assert.match(expired.json().detail, /^No synthesis syn_[0-9a-f]{24} in the last 600 seconds$/)
  })

  it('answers 404 for an unknown synthesis and 400 for a malformed id, in {detail}', async () => {
    const { app } = speechApp()
    const unknown = await app.inject({ method: 'GET', url: `/v1/tts/syn_${'0'.repeat(24)}/visemes` })
    assert.equal(unknown.statusCode, 404)
    assert.deepEqual(Object.keys(unknown.json()), ['detail'])
    const malformed = await app.inject({ method: 'GET', url: '/v1/tts/nope/visemes' })
    assert.equal(malformed.statusCode, 400)
    assert.match(malformed.json().detail, /^synthesis_id must be a synthesis id \(syn_ and 24 hex digits\)/)
    const notBoolean = await app.inject({ method: 'POST', url: '/v1/tts', payload: { text: 'hi', visemes: 'yes' } })
    assert.equal(notBoolean.statusCode, 400)
    assert.equal(notBoolean.json().detail, 'visemes must be boolean')
  })

  it('says plainly that the online Edge voices give no visemes: null in JSON, 409 by id', async (t) => {
    const { app: local } = speechApp()
    const mp3 = (await local.inject({ method: 'POST', url: '/v1/tts', payload: { text: 'Edge stand-in audio.' } })).rawPayload
    const edge = await startFakeEdge(mp3)
    t.after(() => edge.close())
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_TTS_PROVIDER: 'edge', AVATAR_TTS_EDGE_URL: edge.url } })
    const json = await app.inject({ method: 'POST', url: '/v1/tts', payload: { text: 'Hello there.', visemes: true } })
    assert.equal(json.statusCode, 200)
    const body = json.json()
    assert.equal(body.provider, 'edge')
    assert.equal(body.visemes, null)
    assert.equal(body.duration_ms, null)
    assert.match(body.visemes_unavailable, /word boundaries/)
    assert.deepEqual(Buffer.from(body.audio, 'base64'), mp3)

    const binary = await app.inject({ method: 'POST', url: '/v1/tts', payload: { text: 'Hello there.' } })
    assert.equal(binary.headers['x-tts-provider'], 'edge')
    const timeline = await app.inject({ method: 'GET', url: `/v1/tts/${binary.headers['x-synthesis-id']}/visemes` })
    assert.equal(timeline.statusCode, 409)
    assert.match(timeline.json().detail, /spoken by edge/)
  })
})

describe('the phoneme-to-viseme table', { skip: engineIndependent }, () => {
  it('reads stress, length and diacritics away, and splits diphthongs and Mandarin finals', () => {
    assert.deepEqual(visemesOfPhoneme('ˈɑː'), ['aa'])
    assert.deepEqual(visemesOfPhoneme('ˈaʊ'), ['aa', 'ou'])
    assert.deepEqual(visemesOfPhoneme('ˈɔːɹ'), ['oh', 'RR'])
    assert.deepEqual(visemesOfPhoneme('n̩'), ['nn'])
    assert.deepEqual(visemesOfPhoneme('ts.h'), ['CH'])
    assert.deepEqual(visemesOfPhoneme('tsh'), ['SS'])
    assert.deepEqual(visemesOfPhoneme('ˈi.'), ['ih'])
    assert.deepEqual(visemesOfPhoneme('ˈuei'), ['ou', 'E', 'ih'])
    assert.deepEqual(visemesOfPhoneme(''), ['sil'])
    assert.deepEqual(visemesOfPhoneme('?'), ['sil'])
  })

  it('builds contiguous spans from phoneme starts, resting before the first', () => {
    const spans = visemeTimeline({
      durationMs: 400.4,
      phonemes: [
        { phoneme: 'p', startMs: 50 },
        { phoneme: 'ˈaʊ', startMs: 100 },
        { phoneme: '', startMs: 300 },
        { phoneme: '', startMs: 350 },
      ],
    })
    assert.deepEqual(spans, [
      { viseme: 'sil', start_ms: 0, end_ms: 50 },
      { viseme: 'PP', start_ms: 50, end_ms: 100 },
      { viseme: 'aa', start_ms: 100, end_ms: 200 },
      { viseme: 'ou', start_ms: 200, end_ms: 300 },
      { viseme: 'sil', start_ms: 300, end_ms: 400 },
    ])
  })
})
