import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { createFakeAsrProvider } from '../../../src/services/avatar/providers/asr/asr.fake.ts'
import { createFakeLlm } from '../../../src/services/avatar/providers/llm/llm.fake.ts'
import type { ProviderStatus, TtsProvider } from '../../../src/services/avatar/providers/tts/tts.port.ts'
import { createFakeTtsProvider } from '../../../src/services/avatar/providers/tts/tts.fake.ts'
import { buildTestApp } from '../../helpers/build-app.ts'
import { errorShapes } from '../../helpers/error-shapes.ts'
import { buildAvatarApp, chat } from './helpers.ts'

const version = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version

/** A synthesis provider whose status the test sets, counting how often it is asked. */
function switchableTts(initial: ProviderStatus | Error) {
  const base = createFakeTtsProvider()
  const state = { next: initial, asked: 0 }
  const provider: TtsProvider = {
    ...base,
    async status() {
      state.asked++
      if (state.next instanceof Error) throw state.next
      return state.next
    },
  }
  return { provider, state }
}

describe('GET /health', () => {
  it("answers the reference backend's shape, with each provider's real state", async (t) => {
    const tts = createFakeTtsProvider()
    const asr = createFakeAsrProvider({ status: { provider: 'none', available: false, message: 'set AVATAR_ASR_API_KEY' } })
    const { app } = await buildAvatarApp(t, { deps: { avatar: { tts, asr } } })
    const response = await app.inject({ method: 'GET', url: '/health' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), {
      status: 'ok',
      uptime_seconds: 0,
      version,
      services: { chat: 'available', llm: 'mock_mode', tts: 'available', asr: 'unavailable' },
    })

    const withModel = await buildAvatarApp(t, { deps: { avatar: { llm: createFakeLlm(), tts: createFakeTtsProvider(), asr: createFakeAsrProvider() } } })
    const body = (await withModel.app.inject({ method: 'GET', url: '/health' })).json()
    assert.deepEqual(body.services, { chat: 'available', llm: 'available', tts: 'available', asr: 'available' })

    // A key configured (no call is made to see the health) counts as a model too.
    const keyed = await buildAvatarApp(t, { env: { AVATAR_LLM_API_KEY: 'sk-test', AVATAR_LLM_BASE_URL: 'http://127.0.0.1:9/v1' }, deps: { avatar: { tts, asr } } })
    assert.equal((await keyed.app.inject({ method: 'GET', url: '/health' })).json().services.llm, 'available')
  })

  it('counts uptime on the injected clock', async (t) => {
    const { app, clock } = await buildAvatarApp(t, { deps: { avatar: { tts: createFakeTtsProvider(), asr: createFakeAsrProvider() } } })
    clock.advance(90_504)
    assert.equal((await app.inject({ method: 'GET', url: '/health' })).json().uptime_seconds, 90.5)
    clock.advance(3_600_000)
    assert.equal((await app.inject({ method: 'GET', url: '/health' })).json().uptime_seconds, 3690.5)
  })

  it('asks the synthesis provider once a minute at most, refreshing behind the answers; a failing status is unavailable', async (t) => {
    const { provider, state } = switchableTts({ provider: 'fake', available: true })
    const { app, clock } = await buildAvatarApp(t, { deps: { avatar: { tts: provider, asr: createFakeAsrProvider() } } })
    const ttsState = async () => (await app.inject({ method: 'GET', url: '/health' })).json().services.tts
    assert.equal(await ttsState(), 'available')
    state.next = new Error('Edge unreachable')
    for (let i = 0; i < 5; i++) assert.equal(await ttsState(), 'available')
    assert.equal(state.asked, 1)

    clock.advance(60_000)
    // This answer still reports the last known state while the provider is asked again.
    assert.equal(await ttsState(), 'available')
    assert.equal(state.asked, 2)
    assert.equal(await ttsState(), 'unavailable')

    state.next = { provider: 'fake', available: false, message: 'down' }
    clock.advance(60_000)
    await ttsState()
    assert.equal(await ttsState(), 'unavailable')
    state.next = { provider: 'fake', available: true }
    clock.advance(60_000)
    await ttsState()
    assert.equal(await ttsState(), 'available')
    assert.equal(state.asked, 4)
  })

  it('is not rate limited and reads no database', async (t) => {
    const { app, database } = await buildAvatarApp(t, {
      env: { AVATAR_RATE_LIMIT: '1/min' },
      deps: { avatar: { tts: createFakeTtsProvider(), asr: createFakeAsrProvider() } },
    })
    assert.equal((await chat(app, { userText: 'hi' })).status, 200)
    assert.equal((await chat(app, { userText: 'hi' })).status, 429)
    await database.destroy()
    for (let i = 0; i < 5; i++) {
      const response = await app.inject({ method: 'GET', url: '/health' })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-ratelimit-limit'], undefined)
    }
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503)
  })

  it('sits beside /healthz and /readyz, which keep their own answers, and is in the OpenAPI document', async (t) => {
    const { app } = await buildTestApp(t)
    assert.deepEqual((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' })
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).json().status, 'ready')
    assert.equal((await app.inject({ method: 'HEAD', url: '/health' })).statusCode, 200)
    const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
    const operation = document.paths['/health'].get
    const schema = operation.responses['200'].content['application/json'].schema
    assert.deepEqual(schema.required, ['status', 'uptime_seconds', 'version', 'services'])
    assert.deepEqual(schema.properties.services.properties.llm.anyOf.map((option: { enum?: string[]; const?: string }) => option.const ?? option.enum?.[0]), [
      'available',
      'mock_mode',
    ])
  })

  it('answers paths under /health with the avatar {detail} 404', async (t) => {
    const { app } = await buildTestApp(t)
    for (const url of ['/health/x', '/health/']) {
      const response = await app.inject({ method: 'GET', url })
      assert.equal(response.statusCode, 404, url)
      errorShapes.avatar(response.json(), 404)
    }
    assert.equal((await app.inject({ method: 'POST', url: '/health' })).statusCode, 404)
    errorShapes.avatar((await app.inject({ method: 'POST', url: '/health' })).json(), 404)
  })
})

describe('paths no route claims', () => {
  it('answer {detail} when the avatar is the only service, the core body when several share the server', async (t) => {
    const alone = await buildAvatarApp(t)
    for (const url of ['/ws-something', '/nothing/here', '/']) {
      const response = await alone.app.inject({ method: 'GET', url })
      assert.equal(response.statusCode, 404, url)
      assert.deepEqual(response.json(), { detail: `No route for GET ${url}` })
    }
    // Errors Fastify raises before routing too (a malformed percent-encoding).
    const malformed = await alone.app.inject({ method: 'GET', url: '/nothing/%ZZ' })
    assert.equal(malformed.statusCode, 400)
    errorShapes.avatar(malformed.json(), 400)
    const shared = await buildTestApp(t)
    const response = await shared.app.inject({ method: 'GET', url: '/ws-something' })
    assert.equal(response.statusCode, 404)
    errorShapes.core(response.json(), 404)
    const payments = await buildTestApp(t, { services: ['payments'] })
    errorShapes.core((await payments.app.inject({ method: 'GET', url: '/ws-something' })).json(), 404)
  })
})
