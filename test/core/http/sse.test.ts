import assert from 'node:assert/strict'
import { once } from 'node:events'
import { type IncomingMessage, request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import { formatSseComment, formatSseEvent, openSseStream, type SseStream } from '../../../src/core/http/sse.ts'

describe('SSE framing', () => {
  it('writes each line of data as its own data field', () => {
    assert.equal(formatSseEvent({ data: 'one' }), 'data: one\n\n')
    assert.equal(formatSseEvent({ data: 'a\nb\r\nc\rd' }), 'data: a\ndata: b\ndata: c\ndata: d\n\n')
    assert.equal(formatSseEvent({ data: '' }), 'data: \n\n')
    assert.equal(formatSseEvent({ data: 'x', event: 'tick', id: '7', retry: 1000 }), 'event: tick\nid: 7\nretry: 1000\ndata: x\n\n')
  })

  it('refuses CR or LF in event and id, which would forge fields', () => {
    assert.throws(() => formatSseEvent({ data: 'x', event: 'a\nevent: b' }), /event must not contain CR or LF/)
    assert.throws(() => formatSseEvent({ data: 'x', event: 'a\rb' }), /CR or LF/)
    assert.throws(() => formatSseEvent({ data: 'x', id: '1\n' }), /id must not contain CR or LF/)
    assert.throws(() => formatSseEvent({ data: 'x', retry: -1 }), /retry/)
  })

  it('writes comments line by line', () => {
    assert.equal(formatSseComment('ping'), ': ping\n\n')
    assert.equal(formatSseComment('a\nb'), ': a\n: b\n\n')
  })
})

async function serve(handler: (stream: SseStream) => Promise<void>, options: { heartbeatMs?: number } = {}) {
  const app = Fastify()
  const streams: SseStream[] = []
  app.get('/events', async (request, reply) => {
    reply.header('x-kept', 'yes')
    const stream = openSseStream(request, reply, options)
    streams.push(stream)
    await handler(stream)
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url, streams }
}

function get(url: string) {
  const request = httpRequest(`${url}/events`, { agent: false })
  request.end()
  return { request, response: once(request, 'response').then(([response]) => response as IncomingMessage) }
}

async function readAll(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8')
  let text = ''
  for await (const chunk of response) text += chunk
  return text
}

describe('openSseStream', () => {
  it('sends the anti-buffering headers, keeps earlier headers, and ends on close()', async (t) => {
    const { app, url } = await serve(async (stream) => {
      await stream.send({ data: 'hello\nworld' })
      stream.close()
      stream.close()
    })
    t.after(() => app.close())
    const { response } = get(url)
    const res = await response
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8')
    assert.equal(res.headers['cache-control'], 'no-cache, no-transform')
    assert.equal(res.headers['x-accel-buffering'], 'no')
    assert.equal(res.headers['x-kept'], 'yes')
    assert.equal(res.headers['content-length'], undefined)
    assert.equal(await readAll(res), 'data: hello\ndata: world\n\n')
  })

  it('sends the headers with an event written at once, and on their own when none comes', async (t) => {
    const { app, url } = await serve(async (stream) => {
      await stream.send({ data: 'first' })
      await sleep(400)
      stream.close()
    })
    t.after(() => app.close())
    // A raw socket sees what came in one read: the status line and the first event together.
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    socket.end('GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    const [first] = (await once(socket, 'data')) as [Buffer]
    socket.destroy()
    assert.match(first.toString(), /^HTTP\/1\.1 200[\s\S]*data: first\n\n/)

    const { app: slow, url: slowUrl } = await serve(async (stream) => {
      await sleep(2000)
      stream.close()
    })
    t.after(() => slow.close())
    const started = performance.now()
    const { request, response } = get(slowUrl)
    assert.equal((await response).statusCode, 200)
    assert.ok(performance.now() - started < 1500, 'the headers waited for an event')
    request.destroy()
  })

  it('sends heartbeat comments while idle', async (t) => {
    const { app, url } = await serve(
      async (stream) => {
        // Fifteen intervals for the two pings asked: timers fire late on a loaded machine.
        await sleep(600)
        stream.close()
      },
      { heartbeatMs: 40 },
    )
    t.after(() => app.close())
    const text = await readAll(await get(url).response)
    assert.ok((text.match(/^: ping$/gm) ?? []).length >= 2, text)
  })

  it('aborts its signal when the client disconnects, not when the server closes', async (t) => {
    let aborted = false
    let written = 0
    const { app, url, streams } = await serve(async (stream) => {
      stream.signal.addEventListener('abort', () => {
        aborted = true
      })
      while (!stream.signal.aborted && written < 1000) {
        await stream.send({ data: `tick ${written++}` })
        await sleep(10)
      }
      // Writing after the client left is a harmless no-op.
      await stream.send({ data: 'late' })
      stream.close()
    })
    t.after(() => app.close())
    const { request, response } = get(url)
    const res = await response
    res.once('data', () => request.destroy())
    for (let i = 0; i < 100 && !aborted; i++) await sleep(10)
    assert.ok(aborted)
    assert.ok(written < 50)
    assert.equal(streams[0].closed, true)

    const {
      app: other,
      url: otherUrl,
      streams: otherStreams,
    } = await serve(async (stream) => {
      await stream.send({ data: 'x' })
      stream.close()
    })
    t.after(() => other.close())
    await readAll(await get(otherUrl).response)
    assert.equal(otherStreams[0].signal.aborted, false)
  })
})
