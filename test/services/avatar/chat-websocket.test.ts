import assert from 'node:assert/strict'
import { once } from 'node:events'
import type { IncomingMessage } from 'node:http'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket, { type ClientOptions } from 'ws'
import { createLifecycle } from '../../../src/core/http/lifecycle.ts'
import { createFakeLlm } from '../../../src/services/avatar/providers/llm/llm.fake.ts'
import type { LlmPort, LlmRequest } from '../../../src/services/avatar/providers/llm/llm.port.ts'
import { startTriadProcess } from '../../helpers/triad-process.ts'
import { buildAvatarApp, readStream, type SseEventData } from './helpers.ts'

/** A model that writes `count` pieces, one every `delayMs`, and tells when it was stopped. */
function slowModel(count: number, delayMs: number) {
  const state = { produced: 0, aborted: false }
  const model: LlmPort = {
    name: 'slow',
    complete: async () => 'unused',
    async *stream(request: LlmRequest) {
      request.signal.addEventListener('abort', () => (state.aborted = true))
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

/** Polls `condition` (bounded) until it holds. */
async function eventually(condition: () => boolean, what: string, attempts = 200) {
  for (let attempt = 0; !condition(); attempt++) {
    assert.ok(attempt < attempts, `timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** `promise`, or a failure after `ms`: a missing close fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  return Promise.race([promise, sleep(ms, undefined, { ref: false }).then(() => assert.fail(`timed out waiting for ${what}`))])
}

interface Client {
  socket: WebSocket
  frames: SseEventData[]
  /** Sends a frame (an object is sent as JSON). */
  send(frame: unknown): void
  /** The frames of the next answer: up to and including its `done` or `error`. */
  nextAnswer(): Promise<SseEventData[]>
  closed: Promise<{ code: number; reason: string }>
}

/** Opens /ws on a real socket, as the meta-human web app does, and collects the frames it receives. */
async function openClient(base: string, query = '?session_id=ws-test', options: ClientOptions = {}): Promise<Client> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws${query}`, options)
  const frames: SseEventData[] = []
  let read = 0
  let wake = () => {}
  socket.on('message', (data, isBinary) => {
    assert.equal(isBinary, false, 'the server sends text frames')
    frames.push(JSON.parse(data.toString()) as SseEventData)
    wake()
  })
  const closed = within(
    once(socket, 'close').then(([code, reason]) => ({ code: code as number, reason: String(reason) })),
    'the socket to close',
    10_000,
  )
  closed.catch(() => {})
  await once(socket, 'open')
  return {
    socket,
    frames,
    send: (frame) => socket.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame)),
    async nextAnswer() {
      for (let attempt = 0; attempt < 500; attempt++) {
        const end = frames.findIndex((frame, index) => index >= read && (frame.type === 'done' || frame.type === 'error'))
        if (end >= 0) {
          const answer = frames.slice(read, end + 1)
          read = end + 1
          return answer
        }
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), closed, sleep(50)])
      }
      throw new Error(`no answer; frames so far: ${JSON.stringify(frames.slice(read))}`)
    },
    closed,
  }
}

/** The handshake's refusal: its status and body. */
async function refusedHandshake(base: string, query: string) {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws${query}`)
  socket.on('error', () => {})
  const [, response] = (await once(socket, 'unexpected-response')) as [unknown, IncomingMessage]
  let body = ''
  for await (const chunk of response) body += chunk
  socket.terminate()
  return { status: response.statusCode, contentType: response.headers['content-type'], body: JSON.parse(body) as unknown }
}

const withoutTimes = (events: SseEventData[]) => events.map(({ type, content, replyText, emotion, action, message }) => ({ type, content, replyText, emotion, action, message }))

describe('GET /ws: chat over a WebSocket', () => {
  it('logs one line per turn with the session, the persona that replied and how the turn ended', async (t) => {
    const lines: Array<Record<string, unknown>> = []
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
        done()
      },
    })
    const { app } = await buildAvatarApp(t, { env: { LOG_LEVEL: 'info' }, logStream })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, '?session_id=logged')
    client.send({ type: 'chat', userText: 'Hello', meta: { characterId: 'serious-advisor' } })
    assert.equal((await client.nextAnswer()).at(-1)?.type, 'done')
    client.send({ type: 'chat', userText: '' })
    assert.equal((await client.nextAnswer()).at(-1)?.type, 'error')
    await eventually(() => lines.filter((line) => line.msg === 'websocket turn').length === 2, 'the turn lines')
    const [turn, refused] = lines.filter((line) => line.msg === 'websocket turn')
    assert.equal(turn.sessionId, 'logged')
    assert.equal(turn.persona, 'advisor')
    assert.equal(turn.outcome, 'done')
    assert.equal(typeof turn.responseTime, 'number')
    assert.equal(refused.persona, undefined)
    assert.equal(refused.outcome, 'error')
    client.socket.close()
  })

  it('answers several turns on one connection with token frames then done, and stores them under the URL session', async (t) => {
    const { app } = await buildAvatarApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, '?session_id=multi')
    const texts = ['Hello, how are you today?', 'Thank you so much!', '你好']
    for (const userText of texts) {
      client.send({ type: 'chat', userText, meta: { characterId: 'companion' } })
      const answer = await client.nextAnswer()
      const done = answer.at(-1)
      assert.equal(done?.type, 'done')
      assert.ok(answer.length > 1)
      assert.ok(answer.slice(0, -1).every((frame) => frame.type === 'token'))
      assert.equal(answer.slice(0, -1).map((frame) => frame.content).join(''), done?.replyText)
      assert.deepEqual(Object.keys(done ?? {}).sort(), ['action', 'emotion', 'replyText', 'type'])
      // The same persona and reply as the HTTP route gives for the same message.
      const plain = await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText, meta: { characterId: 'companion' } } })
      assert.deepEqual({ replyText: done?.replyText, emotion: done?.emotion, action: done?.action }, plain.json())
    }
    const history = await app.inject({ method: 'GET', url: '/v1/session/multi/history' })
    assert.equal(history.statusCode, 200)
    const messages = history.json().messages as Array<{ role: string; content: string; emotion?: string }>
    assert.deepEqual(
      messages.filter((message) => message.role === 'user').map((message) => message.content),
      texts,
    )
    assert.equal(messages.length, 6)
    assert.deepEqual(
      messages.filter((message) => message.role === 'assistant').map((message) => message.content),
      client.frames.filter((frame) => frame.type === 'done').map((frame) => frame.replyText),
    )
    assert.equal(client.socket.readyState, WebSocket.OPEN)
    client.socket.close()
  })

  it('sends exactly the events of the SSE route for the same reply of a model', async (t) => {
    const llm = createFakeLlm({ pieces: ['[emo', 'tion:surprised][action:think] Well', ', [1] that', ' is new.'] })
    const { app } = await buildAvatarApp(t, { llm })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const { events } = await readStream(base, { userText: 'Guess what?' })
    const client = await openClient(base)
    client.send({ type: 'chat', userText: 'Guess what?' })
    const answer = await client.nextAnswer()
    assert.deepEqual(withoutTimes(answer), withoutTimes(events))
    assert.deepEqual(answer.at(-1), { type: 'done', replyText: 'Well, [1] that is new.', emotion: 'surprised', action: 'think' })
    // The model saw the session's history (the URL's session) on the second turn.
    client.send({ type: 'chat', userText: 'And then?' })
    await client.nextAnswer()
    assert.deepEqual(
      llm.requests.at(-1)?.map((message) => message.role),
      ['system', 'user', 'assistant', 'user'],
    )
  })

  it('ends a turn whose model fails mid-reply with an error frame, stores nothing, and keeps the socket for the next turn', async (t) => {
    const { app } = await buildAvatarApp(t, { llm: createFakeLlm({ pieces: ['[emotion:sad] One', ' two', ' three'], failAfter: 2 }) })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, '?session_id=broken')
    client.send({ type: 'chat', userText: 'count' })
    const answer = await client.nextAnswer()
    assert.deepEqual(
      answer.map((frame) => frame.type),
      ['token', 'token', 'error'],
    )
    assert.match(answer.at(-1)?.message ?? '', /stopped responding/)
    assert.equal((await app.inject('/v1/session/broken/history')).statusCode, 404)
    assert.equal(client.socket.readyState, WebSocket.OPEN)
  })

  it('answers frames sent while a turn runs in order, after it', async (t) => {
    const { model } = slowModel(3, 20)
    const { app } = await buildAvatarApp(t, { llm: model })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base)
    client.send({ type: 'chat', userText: 'first' })
    client.send('not json')
    client.send({ type: 'chat', userText: 'second' })
    const first = await client.nextAnswer()
    const second = await client.nextAnswer()
    const third = await client.nextAnswer()
    assert.equal(first.at(-1)?.replyText, 'word0 word1 word2')
    assert.deepEqual(second, [{ type: 'error', message: 'Malformed JSON in message' }])
    assert.equal(third.at(-1)?.type, 'done')
  })

  it('closes with 1008 a client that piles up frames without waiting for replies', async (t) => {
    const { model } = slowModel(1000, 50)
    const { app } = await buildAvatarApp(t, { llm: model })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base)
    for (let i = 0; i < 12; i++) client.send({ type: 'chat', userText: `message ${i}` })
    const { code, reason } = await client.closed
    assert.equal(code, 1008)
    assert.match(reason, /too many messages/)
  })

  it('answers every kind of bad frame with an error frame worded as the HTTP error, and the socket stays open', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_MAX_TEXT_LENGTH: '20' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, '?session_id=bad-frames')
    const raw: Array<[string | Buffer, string]> = [
      ['{"type":"chat",', 'Malformed JSON in message'],
      [Buffer.from([1, 2, 3]), 'Audio frames need voice mode: send {"type":"voice.start","sampleRate":16000} first'],
      ['[1,2]', 'message must be a JSON object'],
      ['"chat"', 'message must be a JSON object'],
      ['{"type":"ping"}', 'Unknown message type: ping'],
      ['{"userText":"hi"}', 'Unknown message type: null'],
      [JSON.stringify({ type: 'x'.repeat(100) }), `Unknown message type: ${'x'.repeat(40)}…`],
    ]
    for (const [frame, message] of raw) {
      client.send(frame)
      assert.deepEqual(await client.nextAnswer(), [{ type: 'error', message }], String(frame))
    }
    // The fields follow the rules of the HTTP body, and their errors read the same.
    const bodies: unknown[] = [
      {},
      { userText: '' },
      { userText: '   ' },
      { userText: 'x'.repeat(21) },
      { userText: 42 },
      { userText: 'hi', meta: 'nope' },
      { userText: 'hi', meta: [1] },
      { userText: 'hi', meta: { characterId: 7 } },
      { userText: 'hi', meta: { note: 'y'.repeat(4100) } },
    ]
    for (const body of bodies) {
      const http = await app.inject({ method: 'POST', url: '/v1/chat', payload: body as object })
      assert.equal(http.statusCode, 400, JSON.stringify(body))
      client.send({ type: 'chat', ...(body as object) })
      assert.deepEqual(await client.nextAnswer(), [{ type: 'error', message: http.json().detail }], JSON.stringify(body))
    }
    client.send({ type: 'chat', userText: 'Hello again', sessionId: 'ignored' })
    assert.equal((await client.nextAnswer()).at(-1)?.type, 'done')
    assert.equal(client.socket.readyState, WebSocket.OPEN)
    // Nothing of the refused frames was stored; the good one was, under the URL's session.
    const history = await app.inject('/v1/session/bad-frames/history')
    assert.equal(history.json().messages.length, 2)
    assert.equal((await app.inject('/v1/session/ignored/history')).statusCode, 404)
  })

  it('closes a socket that sends a frame larger than an HTTP body may be, with 1009', async (t) => {
    const { app } = await buildAvatarApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base)
    client.send({ type: 'chat', userText: 'x'.repeat(app.initialConfig.bodyLimit ?? 0) })
    assert.equal((await client.closed).code, 1009)
  })

  it('counts every frame against the client rate limit shared with HTTP, and answers a limited one with an error frame', async (t) => {
    const { app, clock } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '3/min' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const http = await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'hi' }, remoteAddress: '127.0.0.1' })
    assert.equal(http.statusCode, 200)
    const client = await openClient(base)
    client.send({ type: 'chat', userText: 'one' })
    assert.equal((await client.nextAnswer()).at(-1)?.type, 'done')
    client.send('bad frame')
    assert.equal((await client.nextAnswer()).at(-1)?.message, 'Malformed JSON in message')
    client.send({ type: 'chat', userText: 'three' })
    const limited = await client.nextAnswer()
    const over = await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'hi' }, remoteAddress: '127.0.0.1' })
    assert.equal(over.statusCode, 429)
    assert.deepEqual(limited, [{ type: 'error', message: over.json().detail }])
    assert.match(over.json().detail, /^Rate limit exceeded\. Try again in \d+ seconds\.$/)
    assert.equal(client.socket.readyState, WebSocket.OPEN)
    clock.advance(60_000)
    client.send({ type: 'chat', userText: 'next minute' })
    assert.equal((await client.nextAnswer()).at(-1)?.type, 'done')
  })

  it('stops the model when the socket closes mid-reply, and stores nothing', async (t) => {
    const { model, state } = slowModel(1000, 20)
    const { app } = await buildAvatarApp(t, { llm: model })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, '?session_id=left')
    client.send({ type: 'chat', userText: 'talk' })
    await eventually(() => client.frames.some((frame) => frame.type === 'token'), 'a token')
    client.socket.close()
    await eventually(() => state.aborted, 'the model call to be aborted')
    assert.ok(state.produced < 1000)
    assert.equal((await app.inject('/v1/session/left/history')).statusCode, 404)
  })

  it('pings idle sockets and keeps those that answer; terminates one that misses a pong', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_WS_HEARTBEAT: '250ms' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const healthy = await openClient(base)
    let pings = 0
    healthy.socket.on('ping', () => pings++)
    const silent = await openClient(base, '?session_id=silent', { autoPong: false })
    const { code } = await silent.closed
    assert.equal(code, 1006, 'terminated without a close frame')
    await eventually(() => pings >= 3, 'three pings', 2000)
    assert.equal(healthy.socket.readyState, WebSocket.OPEN)
    healthy.send({ type: 'chat', userText: 'still here?' })
    assert.equal((await healthy.nextAnswer()).at(-1)?.type, 'done')
  })

  it('refuses a handshake without a valid session_id with 400 and a {detail} body, and a plain GET with 426', async (t) => {
    const { app } = await buildAvatarApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    assert.deepEqual(await refusedHandshake(base, ''), {
      status: 400,
      contentType: 'application/json; charset=utf-8',
      body: { detail: 'missing required field session_id' },
    })
    const bad = await refusedHandshake(base, '?session_id=no%20spaces')
    assert.equal(bad.status, 400)
    assert.match(String((bad.body as { detail: string }).detail), /^session_id must be/)
    assert.equal((await refusedHandshake(base, `?session_id=${'a'.repeat(129)}`)).status, 400)
    const plain = await app.inject({ method: 'GET', url: '/ws?session_id=abc' })
    assert.equal(plain.statusCode, 426)
    assert.equal(plain.headers.upgrade, 'websocket')
    assert.match(plain.json().detail, /WebSocket/)
  })

  it('takes upgrades only on /ws: an Upgrade header elsewhere gets an ordinary answer', async (t) => {
    const { app } = await buildAvatarApp(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/sessions`)
    socket.on('error', () => {})
    const [, response] = (await once(socket, 'unexpected-response')) as [unknown, IncomingMessage]
    assert.equal(response.statusCode, 200)
    socket.terminate()
  })
})

describe('GET /ws when the server stops', () => {
  it('closed at once (no grace period): a running turn ends with the retry error frame, then every socket closes with 1001', async (t) => {
    const { model, state } = slowModel(1000, 20)
    const { app } = await buildAvatarApp(t, { llm: model })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const busy = await openClient(base, '?session_id=cut')
    const idle = await openClient(base, '?session_id=idle')
    busy.send({ type: 'chat', userText: 'talk' })
    await eventually(() => busy.frames.length >= 2, 'tokens')
    const started = performance.now()
    await app.close()
    assert.ok(performance.now() - started < 2000)
    const answer = await busy.nextAnswer()
    assert.equal(answer.at(-1)?.type, 'error')
    assert.equal(answer.at(-1)?.message, 'The server is restarting; please send the message again.')
    assert.equal((await busy.closed).code, 1001)
    assert.equal((await idle.closed).code, 1001)
    assert.ok(state.aborted)
  })

  it('draining: idle sockets close with 1001 at once, a running turn goes on to its done and its socket closes after it', async (t) => {
    const lifecycle = createLifecycle()
    const { model, state } = slowModel(15, 20)
    const { app } = await buildAvatarApp(t, { llm: model, lifecycle })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const busy = await openClient(base, '?session_id=drain')
    const idle = await openClient(base, '?session_id=idle')
    busy.send({ type: 'chat', userText: 'talk' })
    await eventually(() => busy.frames.length >= 2, 'tokens')
    lifecycle.startDraining()
    let closed = false
    const closing = app.close().then(() => (closed = true))
    assert.equal((await idle.closed).code, 1001)
    assert.equal(busy.socket.readyState, WebSocket.OPEN, 'a socket with a running turn stays open')
    const answer = await busy.nextAnswer()
    assert.equal(closed, false, 'the app waits for the running turn')
    assert.equal(answer.at(-1)?.type, 'done')
    assert.equal(answer.at(-1)?.replyText, Array.from({ length: 15 }, (_, i) => `word${i}`).join(' '))
    assert.equal((await busy.closed).code, 1001)
    await closing
    assert.equal(state.aborted, false)
  })

  it('draining: a turn still running when the grace period ends gets the retry error frame', async (t) => {
    const lifecycle = createLifecycle()
    const { model, state } = slowModel(1000, 20)
    const { app } = await buildAvatarApp(t, { llm: model, lifecycle })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const busy = await openClient(base, '?session_id=slow')
    busy.send({ type: 'chat', userText: 'talk' })
    await eventually(() => busy.frames.length >= 2, 'tokens')
    lifecycle.startDraining()
    const closing = app.close()
    await sleep(50)
    assert.equal(busy.socket.readyState, WebSocket.OPEN)
    lifecycle.endGrace()
    const answer = await busy.nextAnswer()
    assert.deepEqual(answer.at(-1), { type: 'error', message: 'The server is restarting; please send the message again.' })
    assert.equal((await busy.closed).code, 1001)
    await closing
    assert.ok(state.aborted)
  })

  it('draining: a socket whose turn ignores the end of the grace period is cut a moment later, so the close ends', async (t) => {
    const lifecycle = createLifecycle()
    // A model that neither yields again nor hears the abort: its turn never ends by itself.
    const stuck: LlmPort = {
      name: 'stuck',
      complete: async () => 'unused',
      async *stream() {
        yield '[emotion:happy][action:speak] Hello'
        await new Promise(() => {})
      },
    }
    const { app } = await buildAvatarApp(t, { llm: stuck, lifecycle })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const busy = await openClient(base, '?session_id=stuck')
    busy.send({ type: 'chat', userText: 'talk' })
    await eventually(() => busy.frames.length >= 1, 'a token')
    lifecycle.startDraining()
    const closing = app.close()
    lifecycle.endGrace()
    assert.equal((await busy.closed).code, 1006, 'cut without a close frame')
    await closing
  })

  it('draining before close: a socket answers what it is sent, then closes with 1001', async (t) => {
    const lifecycle = createLifecycle()
    const { app } = await buildAvatarApp(t, { lifecycle })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = await openClient(base, '?session_id=late')
    lifecycle.startDraining()
    client.send({ type: 'chat', userText: 'Hello' })
    assert.equal((await client.nextAnswer()).at(-1)?.type, 'done')
    assert.equal((await client.closed).code, 1001)
  })

  it('SIGTERM to a real server: the running turn streams to its done, every socket closes with 1001, exit 0', async (t) => {
    const server = await startTriadProcess(t, { AVATAR_MOCK_TOKEN_DELAY: '60ms', AVATAR_RATE_LIMIT: '0', LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT: '20s' })
    const busy = await openClient(server.base, '?session_id=sigterm')
    const idle = await openClient(server.base, '?session_id=idle')
    busy.send({ type: 'chat', userText: 'Tell me a long story about the sea, please.' })
    await eventually(() => busy.frames.length >= 1, 'a token')
    const exited = once(server.child, 'exit')
    server.child.kill('SIGTERM')
    const answer = await busy.nextAnswer()
    assert.equal(answer.at(-1)?.type, 'done', JSON.stringify(answer.at(-1)))
    assert.equal((await busy.closed).code, 1001)
    assert.equal((await idle.closed).code, 1001)
    const [code] = await within(exited, 'the server to exit', 20_000)
    assert.equal(code, 0, server.output().slice(-1000))
  })
})
