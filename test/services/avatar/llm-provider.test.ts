import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createManualClock } from '../../../src/core/clock.ts'
import { mockReply } from '../../../src/services/avatar/modules/chat/mock.ts'
import { BUILT_IN_PERSONAS } from '../../../src/services/avatar/personas.ts'
import { createChatService } from '../../../src/services/avatar/modules/chat/chat.service.ts'
import { llmFromConfig } from '../../../src/services/avatar/modules/chat/index.ts'
import { nodeFetch, takeNodeBody } from '../../../src/services/avatar/providers/llm/node-fetch.ts'
import type { SessionsService } from '../../../src/services/avatar/modules/sessions/sessions.service.ts'
import { testConfig } from '../../helpers/build-app.ts'
import { type FakeOpenAiServer, startFakeOpenAi } from './fake-openai-server.ts'
import { buildAvatarApp, chat, readStream } from './helpers.ts'

const aria = BUILT_IN_PERSONAS[0]

describe('OpenAI-compatible provider', () => {
  let fake: FakeOpenAiServer
  before(async () => {
    fake = await startFakeOpenAi()
  })
  after(() => fake.close())
  beforeEach(() => {
    fake.requests.length = 0
    fake.aborted = 0
    fake.script = { pieces: ['[emotion:happy][action:wave] ', 'Hello', ' from', ' the', ' model!'] }
  })

  const env = (extra: Record<string, string> = {}) => ({
    AVATAR_LLM_API_KEY: 'sk-test',
    AVATAR_LLM_BASE_URL: fake.baseUrl,
    AVATAR_LLM_MODEL: 'fake-model',
    AVATAR_LLM_MAX_RETRIES: '0',
    ...extra,
  })

  it('answers /v1/chat from the model (non-streaming), with the markers parsed out', async (t) => {
    const { app } = await buildAvatarApp(t, { env: env() })
    const reply = await chat(app, { userText: 'Hi!', meta: { characterId: 'service', page: 'checkout' } })
    assert.deepEqual(reply.body, { replyText: 'Hello from the model!', emotion: 'happy', action: 'wave' })
    assert.equal(fake.requests.length, 1)
    const [request] = fake.requests
    assert.equal(request.authorization, 'Bearer sk-test')
    assert.equal(request.body.model, 'fake-model')
    assert.ok(!request.body.stream)
    assert.equal(request.body.messages[0].role, 'system')
    assert.match(request.body.messages[0].content, /customer-service/)
    assert.match(request.body.messages[0].content, /"page":"checkout"/)
    assert.deepEqual(request.body.messages.at(-1), { role: 'user', content: 'Hi!' })
  })

  it('streams from the model, removing markers split across chunks', async (t) => {
    fake.script = { pieces: ['[emo', 'tion:sur', 'prised][act', 'ion:think] Hm', 'm, ', 'interest', 'ing.'] }
    const { app } = await buildAvatarApp(t, { env: env() })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'Guess what' })
    const tokens = events.filter((event) => event.type === 'token').map((event) => event.content ?? '')
    assert.ok(tokens.length >= 3)
    assert.ok(
      tokens.every((token) => !/[[\]]/.test(token)),
      JSON.stringify(tokens),
    )
    assert.deepEqual({ ...events.at(-1), at: 0 }, { type: 'done', replyText: 'Hmm, interesting.', emotion: 'surprised', action: 'think', at: 0 })
    assert.equal(tokens.join(''), 'Hmm, interesting.')
    assert.equal(fake.requests[0].body.stream, true)
  })

  it('keeps the text of a reply with missing or invalid markers and classifies it', async (t) => {
    const { app } = await buildAvatarApp(t, { env: env() })
    fake.script = { pieces: ['Thank you so much, ', 'that is very kind.'] }
    assert.deepEqual((await chat(app, { userText: 'x' })).body, { replyText: 'Thank you so much, that is very kind.', emotion: 'happy', action: 'nod' })
    fake.script = { pieces: ['[emotion:ecstatic][action:backflip] ', 'What do you think?'] }
    assert.deepEqual((await chat(app, { userText: 'x' })).body, { replyText: 'What do you think?', emotion: 'neutral', action: 'think' })
    fake.script = { pieces: ['[emotion:sad] ', 'I am sorry to hear that.'] }
    assert.deepEqual((await chat(app, { userText: 'x' })).body, { replyText: 'I am sorry to hear that.', emotion: 'sad', action: 'speak' })
    fake.script = { pieces: ['Sure thing. [action:nod'] }
    assert.deepEqual((await chat(app, { userText: 'x' })).body, { replyText: 'Sure thing.', emotion: 'happy', action: 'nod' })
    // A reply that is nothing but markers is no reply: the mock answers.
    fake.script = { pieces: ['[emotion:happy][action:wave]'] }
    assert.deepEqual((await chat(app, { userText: 'Hello' })).body, mockReply('Hello', aria))
  })

  it('falls back to the mock on HTTP errors, nonsense and refused connections', async (t) => {
    const { app } = await buildAvatarApp(t, { env: env() })
    for (const status of [500, 502, 429, 401, 400]) {
      fake.script = { pieces: ['unused'], status }
      assert.deepEqual((await chat(app, { userText: 'Hello' })).body, mockReply('Hello', aria), `status ${status}`)
    }
    fake.script = { pieces: ['unused'], garbage: true }
    assert.deepEqual((await chat(app, { userText: 'Hello' })).body, mockReply('Hello', aria))

    const { app: nowhere } = await buildAvatarApp(t, { env: env({ AVATAR_LLM_BASE_URL: 'http://127.0.0.1:1/v1' }) })
    assert.deepEqual((await chat(nowhere, { userText: '你好' })).body, mockReply('你好', aria))
    const url = await nowhere.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: '你好' })
    assert.equal(events.at(-1)?.replyText, mockReply('你好', aria).replyText)
  })

  it('retries a failed call when allowed', async (t) => {
    fake.script = { pieces: ['[emotion:happy] Second time lucky.'], status: 503, failTimes: 1 }
    const { app } = await buildAvatarApp(t, { env: env({ AVATAR_LLM_MAX_RETRIES: '2' }) })
    assert.deepEqual((await chat(app, { userText: 'x' })).body.replyText, 'Second time lucky.')
    assert.equal(fake.requests.length, 2)
  })

  it('retries a failed streamed call the client\'s way, its first attempt counted', async (t) => {
    fake.script = { pieces: ['[emotion:happy] Second time lucky.'], status: 503, failTimes: 1, retryAfterMs: 0 }
    const { app } = await buildAvatarApp(t, { env: env({ AVATAR_LLM_MAX_RETRIES: '1' }) })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'x' })
    assert.equal(events.at(-1)?.replyText, 'Second time lucky.')
    // The first attempt (the adapter's own request) and the client's one retry: the same request.
    assert.equal(fake.requests.length, 2)
    assert.deepEqual(fake.requests[0], fake.requests[1])
    assert.equal(fake.requests[0].authorization, 'Bearer sk-test')
    assert.equal(fake.requests[0].body.stream, true)

    // Without retries, a failed first attempt is the failure: one request, then the mock.
    fake.requests.length = 0
    fake.script = { pieces: ['unused'], status: 503 }
    const { app: once } = await buildAvatarApp(t, { env: env() })
    const onceUrl = await once.listen({ port: 0, host: '127.0.0.1' })
    assert.equal((await readStream(onceUrl, { userText: 'Hello' })).events.at(-1)?.replyText, mockReply('Hello', aria).replyText)
    assert.equal(fake.requests.length, 1)
  })

  it('bounds the whole wait, retries included, by AVATAR_LLM_TIMEOUT', async (t) => {
    fake.script = { pieces: ['unused'], status: 500 }
    // Long enough for a retry after the client's first back-off (about half a second) on a busy CPU.
    const { app } = await buildAvatarApp(t, { env: env({ AVATAR_LLM_MAX_RETRIES: '10', AVATAR_LLM_TIMEOUT: '1500ms' }) })
    const started = performance.now()
    assert.deepEqual((await chat(app, { userText: 'Hello' })).body, mockReply('Hello', aria))
    const elapsed = performance.now() - started
    // Ten retries with the client's back-off would take well over ten seconds.
    assert.ok(elapsed >= 1450 && elapsed < 5000, `took ${elapsed} ms`)
    assert.ok(fake.requests.length >= 2)
  })

  it('gives up on a slow model after the timeout, and hangs up on it', async (t) => {
    fake.script = { pieces: ['too late'], firstDelayMs: 2000 }
    const { app } = await buildAvatarApp(t, { env: env({ AVATAR_LLM_TIMEOUT: '300ms' }) })
    // Had it waited, the model's "too late" would be the reply.
    assert.deepEqual((await chat(app, { userText: 'Hello' })).body, mockReply('Hello', aria))
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'Hello' })
    assert.equal(events.at(-1)?.type, 'done')
    assert.equal(events.at(-1)?.replyText, mockReply('Hello', aria).replyText)
    for (let i = 0; i < 50 && fake.aborted < 2; i++) await sleep(20)
    assert.equal(fake.aborted, 2)
  })

  it('does not cut off a long reply that keeps coming', async (t) => {
    // The reply takes 1.25 s in all, twice the limit; each gap is 250 ms, leaving a loaded
    // machine 350 ms of slack per gap (120 ms gaps under a 300 ms limit failed at load 10).
    fake.script = { pieces: ['one', ' two', ' three', ' four', ' five'], delayMs: 250 }
    const { app } = await buildAvatarApp(t, { env: env({ AVATAR_LLM_TIMEOUT: '600ms' }) })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'count' })
    assert.equal(events.at(-1)?.replyText, 'one two three four five')
  })

  it('ends the stream with an error event when the model drops mid-reply', async (t) => {
    fake.script = { pieces: ['[emotion:happy] Once', ' upon', ' a time'], dropAfter: 2, delayMs: 50 }
    const { app } = await buildAvatarApp(t, { env: env() })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'story', sessionId: 'dropped' })
    assert.deepEqual(
      events.map((event) => event.type),
      ['token', 'token', 'error'],
    )
    assert.equal(events[0].content, 'Once')
  })

  it('aborts the model call when the streaming client disconnects', async (t) => {
    fake.script = { pieces: Array.from({ length: 50 }, (_, i) => ` w${i}`), delayMs: 30 }
    const { app } = await buildAvatarApp(t, { env: env() })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'go on' }, { stopAfter: 2 })
    assert.equal(events.length, 2)
    for (let i = 0; i < 50 && fake.aborted === 0; i++) await sleep(20)
    assert.equal(fake.aborted, 1)
  })

  it('aborts the model call when a /v1/chat client hangs up, and records nothing', async (t) => {
    fake.script = { pieces: ['too late'], firstDelayMs: 3000 }
    const { app } = await buildAvatarApp(t, { env: env() })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = new AbortController()
    const pending = fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userText: 'hi', sessionId: 'hung-up' }),
      signal: client.signal,
    }).catch((error: unknown) => error)
    for (let i = 0; i < 50 && fake.requests.length === 0; i++) await sleep(20)
    client.abort()
    await pending
    for (let i = 0; i < 50 && fake.aborted === 0; i++) await sleep(20)
    assert.equal(fake.aborted, 1)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/hung-up/history' })).statusCode, 404)
  })

  it('sends the last messages of the session as context', async (t) => {
    fake.script = { pieces: ['[emotion:neutral][action:nod] Noted.'] }
    const { app } = await buildAvatarApp(t, { env: env({ AVATAR_HISTORY_LIMIT: '2' }) })
    await chat(app, { sessionId: 'ctx', userText: 'My name is Ada.' })
    await chat(app, { sessionId: 'ctx', userText: 'What is my name?' })
    assert.deepEqual(fake.requests[1].body.messages.slice(1), [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: 'What is my name?' },
    ])
  })

  it('logs the failure it falls back from', async () => {
    fake.script = { pieces: ['unused'], status: 500 }
    const config = testConfig({ AVATAR_LLM_API_KEY: 'sk-test', AVATAR_LLM_BASE_URL: fake.baseUrl, AVATAR_LLM_MAX_RETRIES: '0' }).avatar.chat
    const llm = llmFromConfig(config)
    assert.ok(llm)
    const sessions = { context: async () => [], record: async () => {} } as unknown as SessionsService
    const warnings: unknown[][] = []
    const log = { warn: (...args: unknown[]) => warnings.push(args) } as never
    const service = createChatService({ config, llm, sessions, clock: createManualClock(), log })
    const reply = await service.reply(await service.prepare({ userText: 'Hello' }), { log })
    assert.deepEqual(reply, mockReply('Hello', aria))
    assert.equal(warnings.length, 1)
    assert.match(String(warnings[0][1]), /falling back|mock/)
    assert.equal((warnings[0][0] as { provider: string }).provider, 'openai-compatible')
  })

  it('keeps the model connection alive from one streamed reply to the next', async (t) => {
    const { app } = await buildAvatarApp(t, { env: env() })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const before = fake.connections
    for (let turn = 0; turn < 3; turn++) {
      const { events } = await readStream(url, { userText: 'Hi' })
      assert.equal(events.at(-1)?.type, 'done')
    }
    assert.ok(fake.connections - before <= 1, `${fake.connections - before} connections for three replies`)
  })

  it('hands a streamed reply over as the node stream itself until something reads the web body', async () => {
    const post = () =>
      nodeFetch(`${fake.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
      })
    const unread = await post()
    // A turn of the event loop later: a web body that pulled on its own would have taken the node stream by now.
    await sleep(5)
    const node = takeNodeBody(unread)
    assert.ok(node)
    let text = ''
    for await (const chunk of node) text += chunk
    assert.match(text, /data: \[DONE\]/)
    // Read as a web body instead, the same reply arrives whole, and the node stream is then taken.
    const read = await post()
    assert.match(await read.text(), /"content":"Hello"[\s\S]*data: \[DONE\]/)
    assert.equal(takeNodeBody(read), undefined)
  })
})
