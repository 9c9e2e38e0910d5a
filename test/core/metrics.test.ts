import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../helpers/build-app.ts'
import { freePort } from '../helpers/free-port.ts'
import { BrowserClient, ADMIN_EMAIL, PASSWORD, startAuthn } from '../services/authn/helpers.ts'
import { buildAvatarApp, chat, readStream } from '../services/avatar/helpers.ts'
import { authorize, basic, merchantFixture } from '../services/payments/helpers.ts'

const TOKEN = 'scrape-token-0123456789'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses Prometheus' text exposition, failing on any line that is neither a comment nor a sample. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`)
    const labels: Record<string, string> = {}
    const body = match[2] ?? ''
    const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy
    let consumed = 0
    for (let found = pair.exec(body); found; found = pair.exec(body)) {
      labels[found[1] ?? ''] = found[2] ?? ''
      consumed = pair.lastIndex
    }
    assert.equal(consumed, body.length, `labels of ${JSON.stringify(line)}`)
    const value = match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : Number(match[3])
    // Prometheus reads NaN in any case (prom-client writes Nan).
    assert.ok(!Number.isNaN(value) || /^nan$/i.test(match[3] ?? ''), `value of ${JSON.stringify(line)}`)
    samples.push({ name: match[1] ?? '', labels, value })
  }
  return samples
}

function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
  return found.reduce((sum, sample) => sum + sample.value, 0)
}

async function scrapeText(app: FastifyInstance): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  assert.equal(response.statusCode, 200, response.body)
  assert.match(response.headers['content-type'] ?? '', /^text\/plain; version=0\.0\.4/)
  return response.body
}

async function scrape(app: FastifyInstance): Promise<Sample[]> {
  return parseExposition(await scrapeText(app))
}

describe('metrics', () => {
  it('are off by default: no /metrics route', async (t) => {
    const { app } = await buildTestApp(t)
    assert.equal((await app.inject('/metrics')).statusCode, 404)
  })

  it('on the main port refuse a scrape without the bearer token, in the error body of the path, and answer with it', async (t) => {
    const { app } = await buildTestApp(t, { env: { METRICS_TOKEN: TOKEN } })
    const none = await app.inject('/metrics')
    assert.equal(none.statusCode, 401)
    assert.equal(none.json().error.code, 'unauthorized')
    assert.match(String(none.headers['www-authenticate']), /^Bearer/)
    const wrong = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}x` } })
    assert.equal(wrong.statusCode, 401)
    const text = await scrapeText(app)
    const samples = parseExposition(text)
    assert.ok(valueOf(samples, 'process_cpu_user_seconds_total') > 0, 'process defaults')
    assert.ok(samples.some((sample) => sample.name === 'nodejs_eventloop_lag_seconds'))
    assert.ok(samples.some((sample) => sample.name === 'nodejs_heap_size_used_bytes'))
    // Samples appear after the first collection; the metric is declared from the start.
    assert.match(text, /^# TYPE nodejs_gc_duration_seconds histogram$/m)
    // Off the public API: not in the OpenAPI document.
    assert.equal((await app.inject('/docs/json')).json().paths['/metrics'], undefined)
  })

  it('count requests by route pattern, never by raw path, and collapse unmatched paths into one label', async (t) => {
    const { app } = await buildTestApp(t, { env: { METRICS_TOKEN: TOKEN }, services: ['avatar'] })
    for (const id of ['ses_a', 'ses_b', 'ses_c']) await app.inject(`/v1/session/${id}/history`)
    for (const path of ['/nowhere/1', '/nowhere/2']) await app.inject(path)
    await app.inject('/healthz')
    const before = await scrape(app)
    await app.inject('/healthz')
    const samples = await scrape(app)
    const routes = new Set(samples.filter((sample) => sample.name === 'http_requests_total').map((sample) => sample.labels.route))
    for (const route of routes) assert.ok(route !== undefined && !/ses_[abc]|nowhere/.test(route), `raw path in a label: ${route}`)
    assert.ok(routes.has('/v1/session/:session_id/history'), [...routes].join(', '))
    assert.equal(valueOf(samples, 'http_requests_total', { route: 'unmatched', status: '404' }), 2)
    assert.equal(valueOf(samples, 'http_requests_total', { route: '/healthz', method: 'GET', status: '200' }) - valueOf(before, 'http_requests_total', { route: '/healthz' }), 1)
    assert.equal(valueOf(samples, 'http_request_duration_seconds_count', { route: '/healthz' }), 2)
  })

  it('serve on a port of their own when METRICS_PORT is set, and not on the main port', async (t) => {
    const port = await freePort()
    const { app } = await buildTestApp(t, { env: { METRICS_PORT: String(port) }, services: ['payments'] })
    await app.ready()
    assert.equal((await app.inject('/metrics')).statusCode, 404)
    await app.inject('/healthz')
    const response = await fetch(`http://127.0.0.1:${port}/metrics`)
    assert.equal(response.status, 200)
    const samples = parseExposition(await response.text())
    assert.equal(valueOf(samples, 'http_requests_total', { route: '/healthz' }), 1)
    assert.ok(valueOf(samples, 'triad_db_query_duration_seconds_count') > 0, 'query latency recorded')
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404)
  })

  it('on their own port require the token too when one is set', async (t) => {
    const port = await freePort()
    const { app } = await buildTestApp(t, { env: { METRICS_PORT: String(port), METRICS_TOKEN: TOKEN }, services: ['payments'] })
    await app.ready()
    const refused = await fetch(`http://127.0.0.1:${port}/metrics`)
    assert.equal(refused.status, 401)
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'unauthorized')
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200)
  })

  it('count authn logins by outcome and throttled attempts', async (t) => {
    const { app } = await startAuthn(t, { METRICS_TOKEN: TOKEN, AUTHN_LOGIN_ATTEMPTS_PER_ACCOUNT: '1' })
    const client = new BrowserClient(app)
    assert.equal((await client.login(ADMIN_EMAIL, PASSWORD)).statusCode, 200)
    assert.equal((await client.login(ADMIN_EMAIL, 'wrong password')).statusCode, 401)
    assert.equal((await client.login(ADMIN_EMAIL, 'wrong password')).statusCode, 429)
    const samples = await scrape(app)
    assert.equal(valueOf(samples, 'triad_authn_logins_total', { method: 'password', outcome: 'success' }), 1)
    assert.equal(valueOf(samples, 'triad_authn_logins_total', { method: 'password', outcome: 'failure' }), 1)
    assert.equal(valueOf(samples, 'triad_authn_logins_total', { method: 'password', outcome: 'throttled' }), 1)
    assert.equal(valueOf(samples, 'triad_authn_throttled_attempts_total'), 1)
    assert.equal(valueOf(samples, 'http_requests_total', { route: '/server/api/authn/login', method: 'POST', status: '429' }), 1)
  })

  it('count avatar tokens by source, model failures with their fallback, and open streams', async (t) => {
    const failing = {
      name: 'failing',
      complete: async () => {
        throw new Error('model down')
      },
      // eslint-disable-next-line require-yield -- fails before its first piece
      stream: async function* () {
        throw new Error('model down')
      },
    }
    const { app } = await buildAvatarApp(t, { env: { METRICS_TOKEN: TOKEN }, llm: failing })
    assert.equal((await chat(app, { userText: 'hello' })).status, 200)
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    await readStream(address, { userText: 'hello there' })
    const samples = await scrape(app)
    assert.equal(valueOf(samples, 'triad_avatar_provider_errors_total', { phase: 'before_first_token' }), 2)
    assert.equal(valueOf(samples, 'triad_avatar_mock_fallbacks_total'), 2)
    assert.ok(valueOf(samples, 'triad_avatar_tokens_streamed_total', { source: 'mock' }) > 0)
    assert.equal(valueOf(samples, 'triad_avatar_tokens_streamed_total', { source: 'model' }), 0)
    assert.equal(valueOf(samples, 'triad_avatar_open_streams', { transport: 'sse' }), 0, 'the stream closed')
  })

  it('count payments captures, voids and refunds by outcome, and idempotent replays', async (t) => {
    const fixture = await merchantFixture(t, { env: { METRICS_TOKEN: TOKEN } })
    const { app } = fixture
    const transactionId = await authorize(fixture, fixture.merchant.id, { amount: 300 })
    const headers = { authorization: basic(fixture.owner.key), 'idempotency-key': 'capture-1' }
    const capture = () => app.inject({ method: 'POST', url: `/transactions/${transactionId}/captures`, headers, payload: { amount: 100, currency: 'EUR' } })
    assert.equal((await capture()).statusCode, 201)
    const replayed = await capture()
    assert.equal(replayed.headers['idempotent-replayed'], 'true')
    const over = await fixture.call('POST', `/transactions/${transactionId}/captures`, { amount: 10_000, currency: 'EUR' })
    assert.equal(over.statusCode, 400)
    assert.equal((await fixture.call('POST', `/transactions/${transactionId}/voids`, { amount: 100 })).statusCode, 201)
    const samples = await scrape(app)
    assert.equal(valueOf(samples, 'triad_payments_movements_total', { kind: 'capture', outcome: 'ok' }), 1)
    assert.equal(valueOf(samples, 'triad_payments_movements_total', { kind: 'void', outcome: 'ok' }), 1)
    const refused = samples.filter((sample) => sample.name === 'triad_payments_movements_total' && sample.labels.kind === 'capture' && sample.labels.outcome !== 'ok')
    assert.equal(refused.reduce((sum, sample) => sum + sample.value, 0), 1)
    assert.equal(valueOf(samples, 'triad_payments_idempotency_replays_total'), 1)
    assert.equal(valueOf(samples, 'triad_payments_authorizations_total', { kind: 'client', outcome: 'approved' }), 0, 'the fixture stored it without the app')
    assert.ok(samples.some((sample) => sample.name === 'http_requests_total' && sample.labels.route === '/transactions/:transactionId/captures'))
  })
})
