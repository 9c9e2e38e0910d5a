import assert from 'node:assert/strict'
import { once } from 'node:events'
import { describe, it } from 'node:test'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'

// As bin/triad.js does: the loader hook first, then the SDK, then everything it instruments
// (so nothing but node:assert, node:events and node:test is imported statically here; see test/helpers/tracing-exporter.ts).
const { exporter, tracing } = await import('../helpers/tracing-exporter.ts')
const { SpanKind } = await import('@opentelemetry/api')
const { Writable } = await import('node:stream')
const { default: WebSocket } = await import('ws')
const { buildTestApp, testDialect } = await import('../helpers/build-app.ts')
const { merchantFixture, authorize } = await import('../services/payments/helpers.ts')
const { startFakeOpenAi } = await import('../services/avatar/fake-openai-server.ts')

function linesInto(lines: Record<string, unknown>[]) {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
}

function traceOf(requestId: string): ReadableSpan[] {
  const spans = exporter.getFinishedSpans()
  const root = spans.find((span) => span.attributes['http.request.id'] === requestId)
  assert.ok(root, `a span with the request id ${requestId}`)
  return spans.filter((span) => span.spanContext().traceId === root.spanContext().traceId)
}

describe('tracing', { concurrency: false }, () => {
  it('makes one trace per request: the server span, the route spans and its database statements, found by the request id', async (t) => {
    t.after(() => exporter.reset())
    const fixture = await merchantFixture(t)
    const transactionId = await authorize(fixture, fixture.merchant.id, { amount: 300 })
    exporter.reset()
    const response = await fixture.call('POST', `/transactions/${transactionId}/captures`, { amount: 100, currency: 'EUR' }, { 'x-request-id': 'capture-trace-1' })
    assert.equal(response.statusCode, 201, response.body)
    const spans = traceOf('capture-trace-1')
    const names = spans.map((span) => span.name)
    assert.ok(spans.some((span) => span.kind === SpanKind.SERVER || span.name.startsWith('request')), names.join(', '))
    // pg's instrumentation on PostgreSQL, the query observer's spans on SQLite; named by the conventions.
    const database = spans.filter((span) => span.attributes['db.system'] === (testDialect === 'postgres' ? 'postgresql' : 'sqlite'))
    assert.ok(database.length >= 2, `database spans in ${names.join(', ')}`)
    assert.ok(names.includes('SELECT payments_transactions'), names.join(', '))
    assert.ok(names.includes('POST /transactions/:transactionId/captures'), names.join(', '))
  })

  it('carries the trace through the language-model call and writes its ids on log lines', async (t) => {
    const fake = await startFakeOpenAi()
    t.after(() => fake.close())
    const lines: Record<string, unknown>[] = []
    const { app } = await buildTestApp(t, {
      services: ['avatar'],
      env: { LOG_LEVEL: 'info', AVATAR_LLM_API_KEY: 'sk-test', AVATAR_LLM_BASE_URL: fake.baseUrl, AVATAR_RATE_LIMIT: '0' },
      logStream: linesInto(lines),
    })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    exporter.reset()
    const response = await fetch(`${address}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'chat-trace-1' }, body: JSON.stringify({ userText: 'hello' }) })
    assert.equal(response.status, 200, await response.clone().text())
    await response.text()
    await new Promise((resolve) => setTimeout(resolve, 50))
    const spans = traceOf('chat-trace-1')
    const names = spans.map((span) => `${span.name}(${SpanKind[span.kind]})`)
    assert.ok(spans.some((span) => span.kind === SpanKind.SERVER), names.join(', '))
    const provider = spans.filter((span) => span.kind === SpanKind.CLIENT && String(span.attributes['url.full'] ?? span.attributes['http.url'] ?? '').startsWith(fake.baseUrl.replace(/\/v1$/, '')))
    assert.equal(provider.length, 1, `the provider's HTTP client span in ${names.join(', ')}`)
    const traceId = spans[0]?.spanContext().traceId
    const logged = lines.find((line) => line.reqId === 'chat-trace-1' && line.msg === 'request completed')
    assert.ok(logged, 'the request line')
    assert.equal(logged.trace_id, traceId)
    assert.match(String(logged.span_id), /^[0-9a-f]{16}$/)
  })

  it("ends a streamed answer's request span when its stream ends (SSE and /ws), with the status that was sent", async (t) => {
    t.after(() => exporter.reset())
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0' } })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    exporter.reset()
    const response = await fetch(`${address}/v1/chat/stream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'stream-trace-1' }, body: JSON.stringify({ userText: 'hello' }) })
    assert.equal(response.status, 200)
    assert.match(await response.text(), /"type":"done"/)
    const socket = new WebSocket(`${address.replace('http', 'ws')}/ws?session_id=trace`)
    await once(socket, 'open')
    socket.close()
    await once(socket, 'close')

    // @fastify/otel's request span (a child of the HTTP server span; a WebSocket upgrade has none, so there it is the root).
    const requestSpan = (route: string) => exporter.getFinishedSpans().find((span) => span.name === route && span.attributes['http.request.id'] !== undefined)
    const requestSpans = () => [requestSpan('POST /v1/chat/stream'), requestSpan('GET /ws')]
    for (let waited = 0; requestSpans().includes(undefined) && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
    const [stream, websocket] = requestSpans()
    const ended = exporter.getFinishedSpans().map((span) => `${span.name}(${SpanKind[span.kind]})`).join(', ')
    assert.ok(stream, `the stream's request span ended: ${ended}`)
    assert.equal(stream.attributes['http.response.status_code'], 200)
    assert.equal(stream.attributes['http.request.id'], 'stream-trace-1')
    assert.ok(websocket, `the socket's request span ended: ${ended}`)
    assert.equal(websocket.attributes['http.response.status_code'], 101)
  })

  it('flushes and stops', async () => {
    await tracing.shutdown()
  })
})
