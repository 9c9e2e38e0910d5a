import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it } from 'node:test'
import type { LlmPort, LlmRequest } from '../../../src/services/avatar/providers/llm/llm.port.ts'
import { createFakeLlm } from '../../../src/services/avatar/providers/llm/llm.fake.ts'
import { buildAvatarApp, readStream } from './helpers.ts'

/** A model that writes `count` pieces, one every `delayMs`, and tells when it was stopped. */
function slowModel(count: number, delayMs: number) {
  const state = { produced: 0, aborted: false, abortedAt: 0, streams: 0 }
  const model: LlmPort = {
    name: 'slow',
    complete: async () => 'unused',
    async *stream(request: LlmRequest) {
      state.streams++
      request.signal.addEventListener('abort', () => {
        state.aborted = true
        state.abortedAt = state.produced
      })
      yield '[emotion:happy][action:speak]'
      for (let i = 0; i < count; i++) {
        await sleep(delayMs, undefined, { signal: request.signal })
        state.produced++
        yield ` word${i}`
      }
    },
  }
  return { model, state }
}

describe('POST /v1/chat/stream', () => {
  it('streams the mock reply as token events and one done event, with anti-buffering headers', async (t) => {
    const { app } = await buildAvatarApp(t)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { response, events } = await readStream(url, { userText: 'Hello, how are you today?' })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    assert.match(response.headers.get('cache-control') ?? '', /no-cache/)
    assert.equal(response.headers.get('x-accel-buffering'), 'no')
    assert.equal(response.headers.get('content-encoding'), null)
    assert.ok(response.headers.get('x-request-id'))
    const tokens = events.filter((event) => event.type === 'token')
    const done = events.at(-1)
    assert.ok(tokens.length > 3)
    assert.equal(done?.type, 'done')
    assert.deepEqual(
      events.map((event) => event.type),
      [...tokens.map(() => 'token'), 'done'],
    )
    assert.equal(tokens.map((event) => event.content).join(''), done?.replyText)
    assert.deepEqual(Object.keys(done ?? {}).sort(), ['action', 'at', 'emotion', 'replyText', 'type'])
    const plain = await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'Hello, how are you today?' } })
    assert.equal(plain.json().replyText, done?.replyText)
  })

  it('streams Chinese character by character', async (t) => {
    const { app } = await buildAvatarApp(t)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: '你好' })
    const tokens = events.filter((event) => event.type === 'token').map((event) => event.content ?? '')
    assert.ok(tokens.every((token) => [...token.replace(/[\p{P}\s]/gu, '')].length <= 1))
    assert.match(events.at(-1)?.replyText ?? '', /\p{Script=Han}/u)
  })

  it('validates before the stream starts: a bad request gets a JSON 400', async (t) => {
    const { app } = await buildAvatarApp(t)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { response, raw } = await readStream(url, { sessionId: 'x' })
    assert.equal(response.status, 400)
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
    assert.deepEqual(JSON.parse(raw), { detail: 'missing required field userText' })
  })

  it('passes tokens on as the model produces them', async (t) => {
    const { model } = slowModel(5, 80)
    const { app } = await buildAvatarApp(t, { llm: model })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'go' })
    const tokens = events.filter((event) => event.type === 'token')
    assert.equal(tokens.length, 5)
    assert.equal(tokens.map((event) => event.content).join(''), 'word0 word1 word2 word3 word4')
    // Had the tokens been buffered, they would all arrive together at the end.
    assert.ok(tokens[4].at - tokens[0].at >= 4 * 80 * 0.8, `tokens arrived at ${tokens.map((event) => Math.round(event.at)).join(', ')} ms`)
    assert.deepEqual({ ...events.at(-1), at: 0 }, { type: 'done', replyText: 'word0 word1 word2 word3 word4', emotion: 'happy', action: 'speak', at: 0 })
  })

  it('stops the model when the client disconnects mid-stream, and records nothing', async (t) => {
    const { model, state } = slowModel(100, 30)
    const { app } = await buildAvatarApp(t, { llm: model })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'tell me a long story', sessionId: 'left' }, { stopAfter: 2 })
    assert.equal(events.length, 2)
    for (let i = 0; i < 50 && !state.aborted; i++) await sleep(20)
    assert.ok(state.aborted, 'the model call was aborted')
    const producedAtAbort = state.produced
    await sleep(150)
    assert.equal(state.produced, producedAtAbort, 'the model stopped producing')
    assert.ok(state.produced < 20)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/left/history' })).statusCode, 404)
  })

  it('stops the mock stream too when the client disconnects', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_MOCK_TOKEN_DELAY: '40ms' } })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'Why is the sky blue?', sessionId: 'mock-left' }, { stopAfter: 1 })
    assert.equal(events.length, 1)
    await sleep(100)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/mock-left/history' })).statusCode, 404)
  })

  it('falls back to the mock when the model fails before the first token', async (t) => {
    const { app } = await buildAvatarApp(t, { llm: createFakeLlm({ failBeforeFirst: true }) })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'Hello' })
    const done = events.at(-1)
    assert.equal(done?.type, 'done')
    assert.match(done?.replyText ?? '', /Aria/)
    assert.equal(
      events
        .filter((event) => event.type === 'token')
        .map((event) => event.content)
        .join(''),
      done?.replyText,
    )
  })

  it('ends with one error event when the model fails after tokens were sent', async (t) => {
    const llm = createFakeLlm({ pieces: ['[emotion:happy]', 'Part', ' one', ' two'], failAfter: 3 })
    const { app } = await buildAvatarApp(t, { llm })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'hi', sessionId: 'broken' })
    assert.deepEqual(
      events.map((event) => event.type),
      ['token', 'token', 'error'],
    )
    assert.equal(typeof events[2].message, 'string')
    assert.deepEqual(Object.keys(events[2]).sort(), ['at', 'message', 'type'])
    assert.equal((await app.inject({ method: 'GET', url: '/v1/session/broken/history' })).statusCode, 404)
  })

  it('records a streamed exchange in its session', async (t) => {
    const { app } = await buildAvatarApp(t)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(url, { userText: 'Thanks!', sessionId: 'streamed' })
    const history = (await app.inject({ method: 'GET', url: '/v1/session/streamed/history' })).json()
    assert.deepEqual(
      history.messages.map((message: { content: string }) => message.content),
      ['Thanks!', events.at(-1)?.replyText],
    )
    assert.equal(history.messages[1].action, 'nod')
  })

  it('sends heartbeat comments while the model is silent', async (t) => {
    const { model } = slowModel(1, 250)
    const { app } = await buildAvatarApp(t, { llm: model, env: { AVATAR_SSE_HEARTBEAT: '50ms' } })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events, raw } = await readStream(url, { userText: 'hm' })
    assert.match(raw, /^: ping$/m)
    assert.deepEqual(
      events.map((event) => event.type),
      ['token', 'done'],
    )
  })

  it('keeps serving after many clients disconnect', async (t) => {
    const { model } = slowModel(50, 20)
    const { app } = await buildAvatarApp(t, { llm: model })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    await Promise.all(Array.from({ length: 20 }, () => readStream(url, { userText: 'x' }, { stopAfter: 1 })))
    const response = await app.inject({ method: 'GET', url: '/v1/sessions' })
    assert.equal(response.statusCode, 200)
  })
})

describe('shutdown with open streams', () => {
  it('ends every open stream with an error event and stops the model, without waiting for it', async (t) => {
    const { model, state } = slowModel(1000, 50)
    const { app } = await buildAvatarApp(t, { llm: model })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const streams = [readStream(url, { userText: 'a', sessionId: 'cut' }), readStream(url, { userText: 'b' })]
    // Both streams running before the close (a fixed wait let a loaded machine close on a
    // connection still in the backlog, which the client saw reset).
    while (state.streams < 2 || state.produced < 2) await sleep(20)
    const started = performance.now()
    await app.close()
    assert.ok(performance.now() - started < 2000)
    for (const { events } of await Promise.all(streams)) {
      assert.ok(events.length >= 2)
      assert.equal(events.at(-1)?.type, 'error')
      assert.match(events.at(-1)?.message ?? '', /restarting/)
      assert.ok(events.slice(0, -1).every((event) => event.type === 'token'))
    }
    assert.ok(state.aborted)
  })
})
