import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { Writable } from 'node:stream'
import { buildTestApp, type TestApp } from '../helpers/build-app.ts'
import { BrowserClient } from '../services/authn/helpers.ts'
import { basic, createApp } from '../services/payments/helpers.ts'

/**
 * Every error Fastify raises itself, before or around a route's own code, answered in the
 * shape of the service that owns the path (issue 13 §1): one table of framework errors, walked
 * for every service.
 */

type Shape = (body: unknown, status: number) => void

const shapes: Record<string, Shape> = {
  authn(body, status) {
    const error = body as Record<string, unknown>
    assert.deepEqual(Object.keys(error).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
    assert.equal(error.status, status)
  },
  avatar(body) {
    const error = body as Record<string, unknown>
    assert.deepEqual(Object.keys(error), ['detail'])
    assert.equal(typeof error.detail, 'string')
  },
  payments(body, status) {
    if (status === 400) {
      assert.ok(Array.isArray(body) && body.length > 0, 'a 400 is an array of field problems')
      for (const problem of body as Array<Record<string, unknown>>) assert.deepEqual(Object.keys(problem).sort(), ['field', 'message'])
      return
    }
    const error = body as Record<string, unknown>
    assert.deepEqual(Object.keys(error).sort(), ['code', 'message'])
    assert.match(String(error.code), /^[a-z_]+$/)
  },
  paymentsClient(body) {
    const error = body as Record<string, unknown>
    assert.match(String(error.code), /^[A-Z_]+$/)
    assert.equal(typeof error.message, 'string')
  },
  core(body) {
    const error = (body as { error: Record<string, unknown> }).error
    assert.equal(typeof error.code, 'string')
    assert.equal(typeof error.message, 'string')
    assert.equal(typeof error.requestId, 'string')
  },
}

interface Owner {
  service: keyof typeof shapes
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
async function credentials(app: FastifyInstance): Promise<Partial<Record<keyof typeof shapes, Record<string, string>>>> {
  const browser = new BrowserClient(app, '/api')
  await browser.request('GET', 'security/csrf')
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  const { key } = await createApp(app)
  return { authn: { cookie, 'x-xsrf-token': browser.xsrf ?? '' }, payments: { authorization: basic(key) } }
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
        shapes[owner.service]?.(JSON.parse(response.body), error.status)
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
      shapes.core?.(response.json(), response.statusCode)
    }
  })

  it('does not echo an over-long path back in the message', async (t) => {
    const { app } = await buildTestApp(t)
    const response = await app.inject({ method: 'GET', url: `/transactions/${LONG_ID}` })
    assert.equal(response.statusCode, 414)
    assert.doesNotMatch(response.body, /aaaaaaaa/)
  })
})
