import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import type { Kysely } from 'kysely'
import type { PaymentsTables } from '../../src/services/payments/tables.ts'

// Every route of the three services, called over a real socket with tracing on (as bin/triad.js
// starts it: the loader hook, the SDK, then what it instruments), and every span of every trace
// checked: names and attributes by OpenTelemetry's HTTP and database conventions, hooks by
// their function names, and nothing of the source, the install path or a secret anywhere.
const { exporter, tracing } = await import('../helpers/tracing-exporter.ts')
const { SpanKind } = await import('@opentelemetry/api')
const { buildTestApp } = await import('../helpers/build-app.ts')
const { authorize, basic, createApp, createMerchant } = await import('../services/payments/helpers.ts')
const { ADMIN_EMAIL, PASSWORD, loggedIn } = await import('../services/authn/helpers.ts')

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
const LIFECYCLE_STAGES = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'notFoundHandler']
const UNKNOWN_ID = '000000000000000000000000'
/**
 * @fastify/websocket (which the avatar's chat socket registers, in the scope of these routes)
 * adds an onRequest and an onResponse hook of its own without names: they show as
 * `onRequest - anonymous`, which says little but leaks nothing. Every hook of ours has a name.
 */
const UNNAMED_THIRD_PARTY_HOOKS = { routes: new Set(['/ws', '/v1/asr', '/v1/asr/status']), spans: new Set(['onRequest - anonymous', 'onResponse - anonymous']) }

/** What must never be in a span: source text, paths of the install, and the secrets the requests carried. */
function leaksIn(text: string, secrets: string[]): string[] {
  const found: string[] = []
  if (/=>|\bfunction\b|\n\s+at |\/\/ |\/\*|\bawait\b|\bconst\b|\basync \(/.test(text)) found.push('source text or a stack')
  if (text.includes(process.cwd()) || /node_modules|file:|\/src\/|\.ts\b/.test(text)) found.push('a file path')
  for (const secret of secrets) if (text.includes(secret)) found.push(`the secret ${secret.slice(0, 6)}…`)
  return found
}

test("every route's trace is named by the conventions, names its hooks, and carries no source text, path or secret", async (t) => {
  const built = await buildTestApp(t, { env: { AUTHN_ADMIN_EMAIL: ADMIN_EMAIL, AUTHN_ADMIN_PASSWORD: PASSWORD } })
  const { app } = built
  t.after(() => tracing.shutdown())

  // Credentials the requests carry, each of which the spans must not: an app key, a JWT, the
  // admin's password (in the login form), a webhook secret (in an answer).
  const owner = await createApp(app, 'Owner')
  const merchant = await createMerchant(app, owner.key)
  const payments = { authorization: basic(owner.key) }
  const authn = await loggedIn(app, ADMIN_EMAIL)
  assert.ok(authn.token)
  const bearer = { authorization: `Bearer ${authn.token}` }
  const hook = await app.inject({ method: 'POST', url: `/merchants/${merchant.id}/webhooks`, headers: payments, payload: { url: 'https://shop.example/hooks', events: ['*'] } })
  assert.equal(hook.statusCode, 201, hook.body)
  const transactionId = await authorize({ ...built, db: built.database.db as Kysely<PaymentsTables> }, merchant.id, { amount: 1000 })
  const secrets = [owner.key, authn.token, PASSWORD, hook.json().webhook.secret as string]

  // Every route of the OpenAPI document, with the credentials of its service and a JSON body
  // where it takes one; known ids where a path names them, so some get past their lookups.
  const document = app.swagger() as { paths: Record<string, Partial<Record<(typeof HTTP_METHODS)[number], unknown>>> }
  const routes = Object.entries(document.paths).flatMap(([path, item]) => HTTP_METHODS.filter((method) => item[method]).map((method) => ({ method: method.toUpperCase(), path })))
  assert.ok(routes.length > 100, `${routes.length} routes`)
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  exporter.reset()
  const called = new Map<string, { method: string; route: string }>()
  for (const { method, path } of routes) {
    const url = path
      .replace('{merchantId}', merchant.id)
      .replace('{transactionId}', transactionId)
      .replace(/\{\w+\}/g, UNKNOWN_ID)
    const headers: Record<string, string> = { ...(path.startsWith('/api') || path.startsWith('/server/api') ? bearer : payments) }
    const hasBody = method !== 'GET' && method !== 'DELETE'
    if (hasBody) headers['content-type'] = 'application/json'
    const response = await fetch(`${address}${url}`, { method, headers, body: hasBody ? '{}' : undefined, signal: AbortSignal.timeout(15_000) }).catch((error: Error) => error)
    if (response instanceof Response) await response.body?.cancel()
    called.set(`${method} ${url}`, { method, route: path.replace(/\{(\w+)\}/g, ':$1') })
  }

  // The HTTP server span ends once the answer is written, after the client has it.
  const serverSpans = () => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER)
  for (let waited = 0; serverSpans().length < routes.length && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
  const spans = exporter.getFinishedSpans()

  const problems: string[] = []
  const byTrace = Map.groupBy(spans, (span) => span.spanContext().traceId)
  const traced = new Set<string>()
  for (const trace of byTrace.values()) {
    // Found by the HTTP server span (a streaming route's own request span ends with the stream).
    const serverSpan = trace.find((span) => span.kind === SpanKind.SERVER && typeof span.attributes['url.path'] === 'string')
    const key = serverSpan && `${String(serverSpan.attributes['http.request.method'])} ${String(serverSpan.attributes['url.path'])}`
    const request = key === undefined ? undefined : called.get(key)
    if (key !== undefined && request) traced.add(key)
    const thirdParty = request !== undefined && UNNAMED_THIRD_PARTY_HOOKS.routes.has(request.route)
    for (const span of trace) {
      if (thirdParty && UNNAMED_THIRD_PARTY_HOOKS.spans.has(span.name)) continue
      problems.push(...checkSpan(span, secrets).map((problem) => `${request ? `${request.method} ${request.route}` : 'a trace'}: ${problem}`))
    }
  }
  assert.deepEqual([...new Set(problems)], [])
  assert.deepEqual(
    [...called].filter(([id]) => !traced.has(id)).map(([, request]) => `${request.method} ${request.route}`),
    [],
    'routes without a trace',
  )

  // The request span and the HTTP server span of a route are named `{method} {route}`.
  const names = new Set(spans.map((span) => span.name))
  for (const name of ['GET /transactions/:transactionId', 'POST /merchants/:merchantId/webhooks', 'GET /api/authn/status', 'handler - GET /transactions/:transactionId']) assert.ok(names.has(name), name)
  for (const name of ['SELECT payments_transactions', 'onRequest - authenticateUnlessPublic', 'onRequest - authenticateRequest']) assert.ok(names.has(name), name)
})

/** What is wrong with one span, by the rules above. */
function checkSpan(span: ReadableSpan, secrets: string[]): string[] {
  const problems: string[] = []
  const texts = [span.name, ...Object.entries(span.attributes).flatMap(([key, value]) => [key, String(value)])]
  for (const event of span.events) texts.push(event.name, ...Object.values(event.attributes ?? {}).map(String))
  if (span.status.message) texts.push(span.status.message)
  for (const text of texts) for (const leak of leaksIn(text, secrets)) problems.push(`${leak} in span "${span.name.slice(0, 80)}": ${text.slice(0, 120)}`)
  const fastifyType = span.attributes['fastify.type']
  if (fastifyType === 'hook' || fastifyType === 'route-hook') {
    const [stage, callback] = span.name.split(' - ')
    if (!LIFECYCLE_STAGES.includes(stage ?? '') || !/^[A-Za-z_$][\w$]*$/.test(callback ?? '') || callback === 'anonymous') problems.push(`a hook span not named "<stage> - <function name>": ${span.name}`)
  }
  if (fastifyType === 'request-handler' && !/^handler - [A-Z]+ \S+$/.test(span.name)) problems.push(`a handler span not named by its route: ${span.name}`)
  const route = span.attributes['http.route']
  const method = span.attributes['http.request.method']
  if (typeof method === 'string' && typeof route === 'string' && span.name !== `${method} ${route}`) problems.push(`an HTTP span named "${span.name}", not "${method} ${route}"`)
  if (span.attributes['db.system.name'] !== undefined && span.attributes['db.system'] === undefined) problems.push(`a database span without db.system: ${span.name}`)
  if (span.attributes['db.query.text'] !== undefined) {
    const operation = span.attributes['db.operation.name']
    const collection = span.attributes['db.collection.name']
    if (typeof operation !== 'string') problems.push(`a statement's span without db.operation.name: ${span.name}`)
    const targetsTable = ['INSERT', 'UPDATE', 'DELETE'].includes(String(operation)) || (operation === 'SELECT' && /\bfrom\b/i.test(String(span.attributes['db.query.text'])))
    if (targetsTable && typeof collection !== 'string') problems.push(`a ${String(operation)} span without db.collection.name: ${String(span.attributes['db.query.text'])}`)
    if (span.name !== (collection === undefined ? operation : `${String(operation)} ${String(collection)}`)) problems.push(`a database span named "${span.name}"`)
  }
  return problems
}
