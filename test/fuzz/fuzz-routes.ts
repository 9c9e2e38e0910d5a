import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { createFakeAsrProvider } from '../../src/services/avatar/providers/asr/asr.fake.ts'
import { createFakeTtsProvider } from '../../src/services/avatar/providers/tts/tts.fake.ts'
import type { Kysely } from 'kysely'
import type { PaymentsTables } from '../../src/services/payments/tables.ts'
import { buildTestApp, type Cleanup, type TestApp } from '../helpers/build-app.ts'
import { assertOwnersErrorShape, ownerOf } from '../helpers/error-shapes.ts'
import { BrowserClient, PASSWORD } from '../services/authn/helpers.ts'
import { authorize, basic, createApp, createMerchant } from '../services/payments/helpers.ts'
import { type Credentials, type FuzzRequest, operationsOf, requestArbitrary } from './requests.ts'
import { sweepRequests } from './sweep.ts'

/**
 * The fuzz suite of issue 13 §6: every route of the OpenAPI document, sent malformed requests.
 * Properties: no 5xx ever; every error in the shape of the service that owns the path; the
 * server stays healthy; nothing it acknowledged is lost.
 */

export interface FuzzOptions {
  seed: number
  runs: number
}

const ADMIN = 'fuzz-admin@example.org'

/** What the server said it kept, to be read back at the end. */
interface Acknowledged {
  chats: Array<{ sessionId: string; userText: string }>
  deletedSessions: Set<string>
  apps: string[]
  merchants: Array<{ id: string; key: string }>
}

async function credentialsFor(test: TestApp): Promise<Credentials & { paymentsKey: string }> {
  const app = test.app
  const browser = new BrowserClient(app, '/api')
  const login = await browser.login(ADMIN)
  assert.equal(login.statusCode, 200, login.body)
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  const { key, id: appId } = await createApp(app)
  const merchant = await createMerchant(app, key)
  const transactionId = await authorize({ ...test, db: test.database.db as Kysely<PaymentsTables> }, merchant.id)
  const eperson = (await browser.request('GET', 'authn/status')).json()._embedded?.eperson?.id as string
  await app.inject({ method: 'POST', url: '/v1/chat', payload: { sessionId: 'fuzz-session', userText: 'hello' } })
  const authn = { authorization: `Bearer ${browser.token}`, cookie, 'x-xsrf-token': browser.xsrf ?? '' }
  const payments = { authorization: basic(key) }
  const byParam: Record<string, string> = { appId, merchantId: merchant.id, transactionId, uuid: eperson, session_id: 'fuzz-session' }
  return {
    paymentsKey: key,
    knownIds: Object.values(byParam),
    valid: [authn, { cookie, 'x-xsrf-token': browser.xsrf ?? '' }, payments, { 'accept-version': '1' }],
    headersFor: (path) => ({ authn, payments, paymentsClient: { 'accept-version': '1' } } as Record<string, Record<string, string>>)[ownerOf(path)] ?? {},
    idFor: (name) => byParam[name] ?? 'x',
  }
}

function parsedBody(response: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(response.body.split('\n')[0] ?? '')
  } catch {
    return undefined
  }
}

/** Notes what a successful request created, so that it can be looked for afterwards. */
function remember(acknowledged: Acknowledged, request: FuzzRequest, response: LightMyRequestResponse): void {
  if (response.statusCode >= 300) return
  const path = request.url.split('?')[0] ?? ''
  const sent = request.payload && request.headers['content-type'] === 'application/json' ? (JSON.parse(request.payload) as Record<string, unknown>) : undefined
  if (request.method === 'POST' && path === '/v1/chat' && typeof sent?.sessionId === 'string' && typeof sent.userText === 'string') {
    acknowledged.chats.push({ sessionId: sent.sessionId, userText: sent.userText })
  }
  if (request.method === 'DELETE' && path.startsWith('/v1/session/')) acknowledged.deletedSessions.add(decodeURIComponent(path.slice('/v1/session/'.length)))
  const body = parsedBody(response) as Record<string, Record<string, string>> | undefined
  if (request.method === 'POST' && path === '/apps' && body?.app?.key) acknowledged.apps.push(body.app.key)
  const key = /^Basic /.test(request.headers.authorization ?? '') ? Buffer.from(request.headers.authorization?.slice(6) ?? '', 'base64').toString().slice(1) : ''
  if (request.method === 'POST' && path === '/merchants' && body?.merchant?.id) acknowledged.merchants.push({ id: body.merchant.id, key })
}

function checkAnswer(request: FuzzRequest, response: LightMyRequestResponse): void {
  // The path as the server saw it: inject resolves dot segments (`/a/%2e%2e/b` is `/b`) as a browser would.
  const path = new URL(request.url, 'http://localhost').pathname
  assert.ok(response.statusCode < 500, `${request.note}: ${response.statusCode} ${response.body.slice(0, 300)}`)
  if (response.statusCode >= 400 && request.method !== 'HEAD') {
    try {
      assertOwnersErrorShape(path, response.statusCode, response.headers['content-type'] as string | undefined, response.body)
    } catch (error) {
      throw new Error(`${request.note} → ${response.statusCode} ${response.body.slice(0, 300)}: ${(error as Error).message}`, { cause: error })
    }
  }
}

async function checkNothingLost(app: FastifyInstance, acknowledged: Acknowledged): Promise<void> {
  for (const { sessionId, userText } of acknowledged.chats) {
    if (acknowledged.deletedSessions.has(sessionId)) continue
    const history = await app.inject({ method: 'GET', url: `/v1/session/${encodeURIComponent(sessionId)}/history` })
    assert.equal(history.statusCode, 200, `session ${sessionId}: ${history.body}`)
    assert.ok(
      (history.json().messages as Array<{ content: string }>).some((message) => message.content === userText),
      `session ${sessionId} lost the message it acknowledged`,
    )
  }
  for (const key of acknowledged.apps) assert.equal((await app.inject({ method: 'GET', url: '/me', headers: { authorization: basic(key) } })).statusCode, 200)
  for (const { id, key } of acknowledged.merchants) {
    const merchant = await app.inject({ method: 'GET', url: `/merchants/${id}`, headers: { authorization: basic(key) } })
    assert.equal(merchant.statusCode, 200, `merchant ${id}: ${merchant.body}`)
  }
}

/** Long strings shortened, so that a counterexample with a 16 kB header stays readable. */
function shorten(value: unknown): string {
  return JSON.stringify(value, (_key, item) => (typeof item === 'string' && item.length > 120 ? `${item.slice(0, 60)}…(${item.length} chars)` : item))
}

/** The app's last error log line (what a 500 logged: its cause), kept to explain a failure. */
function lastErrorLog(): { stream: Writable; read: () => string | undefined } {
  let last: string | undefined
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      last = chunk.toString()
      done()
    },
  })
  return { stream, read: () => last }
}

function failureReport(seed: number, outcome: fc.RunDetails<[FuzzRequest]>, logged: string | undefined): string {
  const cause = outcome.errorInstance instanceof Error ? outcome.errorInstance.message : String(outcome.errorInstance)
  return [
    `fuzz failed after ${outcome.numRuns} requests (seed ${seed}, path ${outcome.counterexamplePath}; repeat with npm run fuzz -- --seed ${seed} --runs ${outcome.numRuns})`,
    `request: ${shorten(outcome.counterexample?.[0])}`,
    `failure: ${cause.length > 2000 ? `${cause.slice(0, 2000)}…` : cause}`,
    ...(logged === undefined ? [] : [`last error logged: ${logged.slice(0, 2000)}`]),
  ].join('\n')
}

/** Builds a full app, walks its OpenAPI document with `runs` malformed requests, checks the properties. */
export async function fuzzRoutes(t: Cleanup, options: FuzzOptions): Promise<{ requests: number; statuses: Record<number, number> }> {
  const errors = lastErrorLog()
  const test = await buildTestApp(t, {
    logStream: errors.stream,
    env: {
      LOG_LEVEL: 'error',
      AUTHN_ADMIN_EMAIL: ADMIN,
      AUTHN_ADMIN_PASSWORD: PASSWORD,
      AUTHN_LOGIN_AS: 'true',
      AVATAR_RATE_LIMIT: '0',
      AVATAR_MOCK_TOKEN_DELAY: '0ms',
      PAYMENTS_RATE_LIMIT: '0',
    },
    deps: { avatar: { tts: createFakeTtsProvider(), asr: createFakeAsrProvider() } },
  })
  const app = test.app
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  // The operator event stream stays open until its client leaves, which an injected request never does.
  const operations = operationsOf(document).filter((operation) => !(operation.method === 'GET' && operation.path.endsWith('/events')))
  const credentials = await credentialsFor(test)
  const acknowledged: Acknowledged = { chats: [], deletedSessions: new Set(), apps: [], merchants: [] }
  const statuses: Record<number, number> = {}
  let requests = 0

  // The sweep reports every failure, not only the first: each is a field to fix.
  const failures: string[] = []
  for (const request of sweepRequests(operations, credentials)) {
    const before = errors.read()
    const response = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload })
    requests += 1
    statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
    try {
      checkAnswer(request, response)
    } catch (error) {
      const logged = errors.read()
      failures.push(`${(error as Error).message.slice(0, 600)}${logged === before ? '' : `\n  logged: ${logged?.slice(0, 600)}`}`)
    }
    remember(acknowledged, request, response)
  }
  if (failures.length > 0) throw new Error(`fuzz sweep: ${failures.length} failures\n${failures.join('\n')}`)

  const outcome = await fc.check(
    fc.asyncProperty(requestArbitrary(operations, credentials), async (request) => {
      const response = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload })
      requests += 1
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
      checkAnswer(request, response)
      remember(acknowledged, request, response)
    }),
    { seed: options.seed, numRuns: options.runs, endOnFailure: true },
  )
  if (outcome.failed) throw new Error(failureReport(options.seed, outcome, errors.read()))

  for (const url of ['/healthz', '/readyz']) assert.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} after the fuzz`)
  await checkNothingLost(app, acknowledged)
  return { requests, statuses }
}
