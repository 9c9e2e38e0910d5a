import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { once } from 'node:events'
import { type AddressInfo, connect } from 'node:net'
import { Writable } from 'node:stream'
import { buildTestApp, type TestApp } from '../helpers/build-app.ts'
import { type ErrorOwner, errorShapes } from '../helpers/error-shapes.ts'
import { BrowserClient } from '../services/authn/helpers.ts'
import { basic, createApp } from '../services/payments/helpers.ts'

/**
 * Every error Fastify raises itself, before or around a route's own code, answered in the
 * shape of the service that owns the path (issue 13 §1): one table of framework errors, walked
 * for every service.
 */

interface Owner {
  service: ErrorOwner
  /** A route with a path parameter, `{id}` standing for it. */
  paramRoute: string
  /** False where a catch-all route answers every path under the parameter (a 404 of the service's own). */
  routerLimitsParam?: false
  /** A route that takes a JSON body. */
  bodyRoute: string
  headers?: Record<string, string>
}

const owners: Owner[] = [
  { service: 'authn', paramRoute: '/api/eperson/epersons/{id}', bodyRoute: '/api/eperson/epersons' },
  { service: 'avatar', paramRoute: '/v1/session/{id}/history', bodyRoute: '/v1/chat' },
  { service: 'payments', paramRoute: '/transactions/{id}', bodyRoute: '/merchants' },
  { service: 'paymentsClient', paramRoute: '/payments/challenges/{id}', routerLimitsParam: false, bodyRoute: '/vault', headers: { 'accept-version': '1' } },
]

const LONG_ID = 'a'.repeat(129)

interface FrameworkError {
  name: string
  status: number
  /** The request that raises it under `owner`'s paths, or undefined where none can. */
  request(owner: Owner): InjectOptions | undefined
}

const json = { 'content-type': 'application/json' }

const frameworkErrors: FrameworkError[] = [
  {
    name: 'a path parameter longer than any identifier',
    status: 414,
    request: (owner) => (owner.routerLimitsParam === false ? undefined : { method: 'GET', url: owner.paramRoute.replace('{id}', LONG_ID) }),
  },
  { name: 'a malformed percent-encoding', status: 400, request: (owner) => ({ method: 'GET', url: owner.paramRoute.replace('{id}', '%ZZ') }) },
  { name: 'a path no route matches', status: 404, request: (owner) => ({ method: 'GET', url: `${owner.bodyRoute}/no/such/route` }) },
  {
    name: 'an unsupported content type',
    status: 415,
    request: (owner) => ({ method: 'POST', url: owner.bodyRoute, headers: { 'content-type': 'application/xml' }, payload: '<a/>' }),
  },
  {
    name: 'a body over the limit',
    status: 413,
    request: (owner) => ({ method: 'POST', url: owner.bodyRoute, headers: json, payload: `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}` }),
  },
  { name: 'malformed JSON', status: 400, request: (owner) => ({ method: 'POST', url: owner.bodyRoute, headers: json, payload: '{"a":' }) },
  { name: 'an empty JSON body', status: 400, request: (owner) => ({ method: 'POST', url: owner.bodyRoute, headers: json, payload: '' }) },
  {
    name: 'a malformed multipart body',
    status: 415,
    request: (owner) => ({
      method: 'POST',
      url: owner.bodyRoute,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      payload: '--x\r\nbroken',
    }),
  },
]

/**
 * What each service checks before it reads a body, so the body's errors are reached: authn a
 * CSRF token, the merchant API a key.
 */
async function credentials(app: FastifyInstance): Promise<Partial<Record<ErrorOwner, Record<string, string>>>> {
  const browser = new BrowserClient(app, '/api')
  await browser.request('GET', 'security/csrf')
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  const { key } = await createApp(app)
  return { authn: { cookie, 'x-xsrf-token': browser.xsrf ?? '' }, payments: { authorization: basic(key) } }
}

/** Writes `raw` to a fresh connection and reads until the server closes it. */
async function rawExchange(port: number, raw: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk) => chunks.push(chunk))
  socket.on('error', () => {})
  socket.write(raw)
  await once(socket, 'close')
  return Buffer.concat(chunks).toString()
}

/** A test app whose log lines are kept, to see that each error is logged. */
async function appWithLog(t: Parameters<typeof buildTestApp>[0]): Promise<TestApp & { lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  const test = await buildTestApp(t, { env: { LOG_LEVEL: 'info' }, logStream: stream })
  return { ...test, lines }
}

describe('errors Fastify raises answer in the owning service’s shape', () => {
  for (const error of frameworkErrors) {
    it(`${error.name}: ${error.status} in every service's shape, and logged`, async (t) => {
      const { app, lines } = await appWithLog(t)
      const passes = await credentials(app)
      for (const owner of owners) {
        const request = error.request(owner)
        if (!request) continue
        const headers = { ...passes[owner.service], ...owner.headers, ...(request.headers as Record<string, string>) }
        const response = await app.inject({ ...request, headers })
        assert.equal(response.statusCode, error.status, `${owner.service} ${request.url}: ${response.body.slice(0, 300)}`)
        assert.match(String(response.headers['content-type']), /^application\/json/)
        errorShapes[owner.service](JSON.parse(response.body), error.status)
        const requestId = response.headers['x-request-id']
        assert.ok(
          lines.some((line) => line.reqId === requestId && line.status === error.status && typeof line.msg === 'string' && line.msg !== 'request completed'),
          `${owner.service}: the error is logged with its request id`,
        )
      }
    })
  }

  it('a path no service owns gets the core’s shape', async (t) => {
    const { app } = await buildTestApp(t)
    for (const url of ['/nothing/%ZZ', `/nothing/${LONG_ID}`, '/nothing']) {
      const response = await app.inject({ method: 'GET', url })
      assert.ok(response.statusCode === 400 || response.statusCode === 404, url)
      errorShapes.core(response.json(), response.statusCode)
    }
  })

  it('a request Node’s HTTP parser refuses (oversized headers, not HTTP) is answered in the owner’s shape over a real socket', async (t) => {
    const { app } = await buildTestApp(t)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = (app.server.address() as AddressInfo).port
    const cases = [
      { raw: `GET /v1/sessions HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`, status: 431, owner: 'avatar' as const },
      { raw: `GET /transactions/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`, status: 431, owner: 'payments' as const },
      { raw: 'NOT HTTP AT ALL\r\n\r\n', status: 400, owner: 'core' as const },
    ]
    for (const { raw, status, owner } of cases) {
      const answer = await rawExchange(port, raw)
      const [head = '', body = ''] = answer.split('\r\n\r\n')
      assert.match(head, new RegExp(`^HTTP/1.1 ${status} `), answer.slice(0, 200))
      assert.match(head, /content-type: application\/json/i)
      errorShapes[owner](JSON.parse(body), status)
    }
  })

  it('does not echo an over-long path back in the message', async (t) => {
    const { app } = await buildTestApp(t)
    const response = await app.inject({ method: 'GET', url: `/transactions/${LONG_ID}` })
    assert.equal(response.statusCode, 414)
    assert.doesNotMatch(response.body, /aaaaaaaa/)
  })
})

describe('regressions found by the fuzz suite', () => {
  it('an avatar page path with a method it does not serve and an empty JSON body answers {detail}, not the core shape', async (t) => {
    const { app } = await buildTestApp(t)
    const response = await app.inject({ method: 'PATCH', url: '/avatar', headers: { 'content-type': 'application/json' }, payload: '' })
    assert.equal(response.statusCode, 400)
    errorShapes.avatar(response.json(), 400)
  })

  it('a payments collection path with no route for the method (POST /transactions, GET /lines) answers in the payments shape', async (t) => {
    const { app } = await buildTestApp(t)
    for (const [method, url] of [
      ['POST', '/transactions'],
      ['GET', '/lines'],
      ['POST', '/merchants/%2e%2e/transactions'],
    ] as const) {
      const response = await app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined })
      assert.equal(response.statusCode, 404, `${method} ${url}`)
      errorShapes.payments(response.json(), 404)
    }
  })
})
