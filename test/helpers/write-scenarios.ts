import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { type Kysely, type LogEvent, sql } from 'kysely'
import { createDb, type Database } from '../../src/core/db/create-db.ts'
import type { PaymentsTables } from '../../src/services/payments/tables.ts'
import { buildTestApp, type Cleanup, type TestApp } from './build-app.ts'

/**
 * Every write route of the three services, driven through HTTP on PostgreSQL, with each
 * request's SQL (Kysely's log hook) and the rows it changed (the tables before and after). Used
 * by test/scaling/write-shape.test.ts (every write stays within one distribution key) and
 * bench/scaling.ts (statements and round trips per route).
 */

/** The operator key of the traced app, for the operator routes' scenarios. */
const OPERATOR_KEY = 'operator-key-of-the-write-scenarios'

/** How a table would be distributed on Citus: by which key, or replicated to every node. */
export type Placement = { key: KeyKind; column: string } | { key: KeyKind; via: { table: string; column: string; parentColumn: string } } | 'reference' | 'local'
export type KeyKind = 'merchant' | 'eperson' | 'session' | 'throttle key' | 'app' | 'vault card' | 'oidc flow' | 'webauthn challenge' | 'synthesis' | 'dashboard session' | 'dashboard link' | 'merchant user'

/**
 * The distribution of every table. `via`: the row carries no key column, it reaches its key
 * through a parent row (a trail entry through its transaction). `reference`: small, read
 * everywhere, replicated. `local`: Triad's own bookkeeping (migration history).
 */
export const PLACEMENT: Record<string, Placement> = {
  payments_merchants: { key: 'merchant', column: 'id' },
  payments_transactions: { key: 'merchant', column: 'merchant_id' },
  payments_lines: { key: 'merchant', column: 'merchant_id' },
  payments_balance_shards: { key: 'merchant', column: 'merchant_id' },
  payments_cards: { key: 'merchant', column: 'merchant_id' },
  payments_disputes: { key: 'merchant', column: 'merchant_id' },
  payments_frauds: { key: 'merchant', column: 'merchant_id' },
  payments_merchant_apps: { key: 'merchant', column: 'merchant_id' },
  payments_merchant_users: { key: 'merchant', column: 'merchant_id' },
  payments_trail: { key: 'merchant', via: { table: 'payments_transactions', column: 'transaction_id', parentColumn: 'id' } },
  payments_idempotency: { key: 'app', column: 'app_id' },
  payments_dashboard_sessions: { key: 'dashboard session', column: 'token_hash' },
  payments_dashboard_user_sessions: { key: 'dashboard session', column: 'token_hash' },
  payments_dashboard_links: { key: 'dashboard link', column: 'token_hash' },
  payments_dashboard_passkeys: { key: 'merchant user', column: 'user_id' },
  payments_dashboard_challenges: { key: 'webauthn challenge', column: 'challenge_hash' },
  payments_webhook_endpoints: { key: 'merchant', column: 'merchant_id' },
  payments_events: { key: 'merchant', column: 'merchant_id' },
  payments_event_deliveries: { key: 'merchant', via: { table: 'payments_events', column: 'event_id', parentColumn: 'id' } },
  payments_delivery_attempts: { key: 'merchant', via: { table: 'payments_events', column: 'event_id', parentColumn: 'id' } },
  payments_apps: 'reference',
  payments_users: 'reference',
  payments_vault_cards: { key: 'vault card', column: 'id' },
  payments_vault_spent_tokens: 'reference',
  payments_vault_keys: 'reference',
  payments_sandbox_cards: 'reference',
  payments_outbox: 'reference',
  authn_epersons: { key: 'eperson', column: 'uuid' },
  authn_sessions: { key: 'eperson', column: 'eperson_uuid' },
  authn_group_members: { key: 'eperson', column: 'eperson_uuid' },
  authn_handoffs: { key: 'eperson', column: 'eperson_uuid' },
  authn_login_failures: { key: 'throttle key', column: 'key' },
  authn_oidc_flows: { key: 'oidc flow', column: 'state_hash' },
  authn_personal_tokens: { key: 'eperson', column: 'eperson_uuid' },
  authn_passkeys: { key: 'eperson', column: 'eperson_uuid' },
  authn_webauthn_challenges: { key: 'webauthn challenge', column: 'challenge_hash' },
  authn_groups: 'reference',
  authn_settings: 'reference',
  avatar_sessions: { key: 'session', column: 'id' },
  avatar_messages: { key: 'session', column: 'session_id' },
  avatar_tts_timelines: { key: 'synthesis', column: 'id' },
}

export interface Statement {
  sql: string
  parameters: readonly unknown[]
  durationMs: number
}

export interface RequestTrace {
  /** `METHOD /route/{pattern}` as the router matched it. */
  route: string
  status: number
  statements: Statement[]
  /** Rows inserted, updated or deleted, per table, each with its distribution key value where it has one. */
  changes: Array<{ table: string; key?: { kind: KeyKind; value: string } }>
}

type Row = Record<string, unknown>

/** A PostgreSQL app (all services) whose statements are logged, and a second connection to look at its tables. */
export interface TracedApp {
  test: TestApp
  app: FastifyInstance
  /** Runs one request and records what it did (with the work it leaves running until `settled` resolves). */
  request(options: InjectOptions, settled?: () => Promise<unknown>): Promise<LightMyRequestResponse>
  traces: RequestTrace[]
}

export async function startTracedApp(t: Cleanup, env: Record<string, string> = {}): Promise<TracedApp> {
  const url = process.env.TEST_DATABASE_URL ?? ''
  assert.match(url, /^postgres/, 'traced apps run on PostgreSQL')
  const schema = `test_${randomBytes(6).toString('hex')}`
  let current: Statement[] | undefined
  const log = (event: LogEvent) => {
    current?.push({ sql: event.query.sql, parameters: event.query.parameters, durationMs: event.queryDurationMillis })
  }
  const database: Database = await createDb(url, { schema, poolSize: 5, log })
  const observer = await createDb(url, { schema, poolSize: 1 })
  t.after(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(observer.db)
    await observer.destroy()
  })
  // Passkeys on: the scenarios run authn's passkey ceremonies.
  const test = await buildTestApp(t, { database, env: { AVATAR_MOCK_TOKEN_DELAY: '0s', AVATAR_RATE_LIMIT: '0', AVATAR_OPERATOR_KEY: OPERATOR_KEY, PAYMENTS_RATE_LIMIT: '0', AUTHN_PASSKEY_RP_ID: 'localhost', ...env } })
  let route = ''
  test.app.addHook('onResponse', async (request) => {
    route = `${request.method} ${request.routeOptions.url ?? request.url}`
  })
  const tables = Object.keys(PLACEMENT)
  const snapshot = async () => {
    const rows = new Map<string, Map<string, Row>>()
    for (const table of tables) {
      const result = await sql<Row>`select * from ${sql.id(table)}`.execute(observer.db)
      rows.set(table, new Map(result.rows.map((row) => [JSON.stringify(row), row])))
    }
    return rows
  }
  const traces: RequestTrace[] = []
  return {
    test,
    app: test.app,
    traces,
    async request(options, settled) {
      const before = await snapshot()
      const statements: Statement[] = []
      current = statements
      const response = await test.app.inject(options)
      // Work a handler leaves running after its reply (a cache refresh, an e-mail) belongs to it too.
      await new Promise((resolve) => setTimeout(resolve, 20))
      await settled?.()
      current = undefined
      const after = await snapshot()
      const changes: RequestTrace['changes'] = []
      for (const table of tables) {
        const old = before.get(table) ?? new Map<string, Row>()
        const now = after.get(table) ?? new Map<string, Row>()
        const changed = [...[...now].filter(([text]) => !old.has(text)), ...[...old].filter(([text]) => !now.has(text))].map(([, row]) => row)
        for (const row of changed) changes.push({ table, key: keyOf(table, row, after, before) })
      }
      traces.push({ route, status: response.statusCode, statements, changes })
      return response
    },
  }
}

function keyOf(table: string, row: Row, ...states: Array<Map<string, Map<string, Row>>>): RequestTrace['changes'][number]['key'] {
  const placement = PLACEMENT[table]
  if (placement === undefined || typeof placement === 'string') return undefined
  if ('column' in placement) return { kind: placement.key, value: String(row[placement.column]) }
  const { table: parentTable, column, parentColumn } = placement.via
  for (const state of states) {
    for (const parent of state.get(parentTable)?.values() ?? []) {
      if (parent[parentColumn] === row[column]) return keyOf(parentTable, parent)
    }
  }
  return { kind: placement.key, value: `unknown (${parentTable} ${String(row[column])})` }
}

const ADMIN = { email: 'admin@example.org', password: 'correct horse battery' }
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const basic = (key: string) => `Basic ${Buffer.from(`:${key}`).toString('base64')}`
const VERSION = { 'accept-version': '1' }

/** Runs every write route once (and the failures that write: a wrong password). */
export async function runWriteScenarios(traced: TracedApp): Promise<void> {
  const { request } = traced
  const ok = (response: LightMyRequestResponse, status: number, what: string) => assert.equal(response.statusCode, status, `${what}: ${response.body.slice(0, 300)}`)

  // authn, as dspace-angular: CSRF cookie and header, then the login form.
  const jar = new Map<string, string>()
  let xsrf = ''
  let token = ''
  const authn = async (method: InjectOptions['method'], path: string, options: { form?: Record<string, string>; json?: unknown } = {}) => {
    const headers: Record<string, string> = {}
    if (jar.size > 0) headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    if (xsrf) headers['x-xsrf-token'] = xsrf
    if (token) headers.authorization = `Bearer ${token}`
    let payload: string | undefined
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      payload = form(options.form)
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json'
      payload = JSON.stringify(options.json)
    }
    const response = await request({ method, url: `/server/api/${path}`, headers, payload })
    const cookies = response.headers['set-cookie']
    for (const cookie of cookies === undefined ? [] : Array.isArray(cookies) ? cookies : [cookies]) {
      const [pair = ''] = cookie.split(';')
      const equals = pair.indexOf('=')
      if (pair.slice(equals + 1) === '') jar.delete(pair.slice(0, equals))
      else jar.set(pair.slice(0, equals), pair.slice(equals + 1))
    }
    if (typeof response.headers['dspace-xsrf-token'] === 'string') xsrf = response.headers['dspace-xsrf-token']
    if (typeof response.headers.authorization === 'string') token = response.headers.authorization.replace('Bearer ', '')
    return response
  }
  ok(await authn('GET', 'security/csrf'), 204, 'csrf')
  ok(await authn('POST', 'authn/login', { form: { user: ADMIN.email, password: 'wrong password' } }), 401, 'a failed login')
  ok(await authn('POST', 'authn/login', { form: { user: ADMIN.email, password: ADMIN.password } }), 200, 'login')
  ok(await authn('POST', 'authn/login'), 200, 'refresh')
  ok(await authn('POST', 'authn/shortlivedtokens'), 200, 'short-lived token')
  const created = await authn('POST', 'eperson/epersons', { json: { email: 'new.user@example.org', password: 'a fine password', canLogIn: true } })
  ok(created, 201, 'create eperson')
  const uuid = (created.json() as { uuid: string }).uuid
  ok(await authn('PATCH', `eperson/epersons/${uuid}`, { json: [{ op: 'replace', path: '/password', value: 'another fine password' }] }), 200, 'patch eperson')
  ok(await authn('DELETE', `eperson/epersons/${uuid}`), 204, 'delete eperson')
  // Beyond DSpace (issue 19): a personal access token created and revoked; a second login, from
  // which the first device's session is revoked.
  const personal = await authn('POST', 'authn/tokens', { json: { name: 'shape', expiresAt: '2026-02-01T00:00:00.000Z', scopes: ['read'] } })
  ok(personal, 201, 'create personal access token')
  ok(await authn('DELETE', `authn/tokens/${(personal.json() as { id: string }).id}`), 204, 'revoke personal access token')
  ok(await authn('POST', 'authn/login', { form: { user: ADMIN.email, password: ADMIN.password } }), 200, 'a second login')
  const sessions = (await authn('GET', 'authn/sessions')).json() as { _embedded: { sessions: Array<{ id: string; current: boolean }> } }
  const firstDevice = sessions._embedded.sessions.find((session) => !session.current)
  ok(await authn('DELETE', `authn/sessions/${firstDevice?.id}`), 204, 'revoke one session')
  // Passkeys (the app runs with AUTHN_PASSKEY_RP_ID): both ceremonies with forged answers, and
  // the removal of a passkey nobody has.
  const passkeyCreation = await authn('POST', 'authn/passkeys/registration/options')
  ok(passkeyCreation, 200, 'passkey registration options')
  const passkeyRegistration = forgedCredential((passkeyCreation.json() as { challenge: string }).challenge, { attestationObject: 'eA' })
  ok(await authn('POST', 'authn/passkeys', { json: { credential: passkeyRegistration } }), 400, 'a forged passkey registration')
  ok(await authn('DELETE', 'authn/passkeys/Zm9yZ2Vk'), 404, 'remove an unknown passkey')
  const passkeyRequest = await authn('POST', 'authn/passkeys/login/options')
  ok(passkeyRequest, 200, 'passkey login options')
  const passkeyAssertion = forgedCredential((passkeyRequest.json() as { challenge: string }).challenge, { authenticatorData: 'eA', signature: 'eA' })
  ok(await authn('POST', 'authn/passkeys/login', { json: { credential: passkeyAssertion } }), 401, 'a forged passkey login')
  ok(await authn('POST', 'authn/logout'), 204, 'logout')

  // avatar
  const chat = { 'content-type': 'application/json' }
  ok(await request({ method: 'POST', url: '/v1/chat', headers: chat, payload: JSON.stringify({ sessionId: 'shape', userText: 'Hello!' }) }), 200, 'chat')
  ok(await request({ method: 'POST', url: '/v1/chat/stream', headers: chat, payload: JSON.stringify({ sessionId: 'shape', userText: 'And again' }) }), 200, 'chat stream')
  ok(await request({ method: 'DELETE', url: '/v1/session/shape' }), 200, 'delete session')
  ok(await request({ method: 'POST', url: '/v1/tts', headers: chat, payload: JSON.stringify({ text: 'Hi.', format: 'wav' }) }), 200, 'speech (its viseme timeline is kept)')
  const operator = { ...chat, authorization: `Bearer ${OPERATOR_KEY}` }
  ok(await request({ method: 'POST', url: '/v1/session/shape/say', headers: operator, payload: JSON.stringify({ text: 'Said by an operator.' }) }), 200, 'operator say')
  ok(await request({ method: 'POST', url: '/v1/session/shape/act', headers: operator, payload: JSON.stringify({ emotion: 'happy' }) }), 200, 'operator act')

  // payments: the merchant API
  const json = { 'content-type': 'application/json' }
  const appResponse = await request({ method: 'POST', url: '/apps', headers: json, payload: '{}' })
  ok(appResponse, 201, 'create app')
  const app = (appResponse.json() as { app: { id: string; key: string } }).app
  const auth = { ...json, authorization: basic(app.key) }
  const merchantResponse = await request({
    method: 'POST',
    url: '/merchants',
    headers: auth,
    payload: JSON.stringify({ currency: 'EUR', email: 'shop@example.com', website: 'https://example.com', descriptor: 'SHAPE', company: { country: 'DK' }, test: true }),
  })
  ok(merchantResponse, 201, 'create merchant')
  const merchant = (merchantResponse.json() as { merchant: { id: string; key: string } }).merchant
  ok(await request({ method: 'PUT', url: `/merchants/${merchant.id}`, headers: auth, payload: JSON.stringify({ name: 'Shape & Co' }) }), 204, 'update merchant')
  ok(await request({ method: 'POST', url: `/merchants/${merchant.id}/users`, headers: auth, payload: JSON.stringify({ email: 'clerk@example.com' }) }), 201, 'invite user')
  const users = await traced.app.inject({ method: 'GET', url: `/merchants/${merchant.id}/users?limit=5`, headers: auth })
  const userId = (JSON.parse(users.body) as Array<{ id: string }>)[0]?.id
  ok(await request({ method: 'DELETE', url: `/merchants/${merchant.id}/users/${userId}`, headers: auth }), 204, 'revoke user')
  const secondApp = (await traced.app.inject({ method: 'POST', url: '/apps', headers: json, payload: '{}' })).json() as { app: { id: string } }
  ok(await request({ method: 'POST', url: `/merchants/${merchant.id}/apps`, headers: auth, payload: JSON.stringify({ appId: secondApp.app.id }) }), 201, 'add app')
  ok(await request({ method: 'DELETE', url: `/merchants/${merchant.id}/apps/${secondApp.app.id}`, headers: auth }), 204, 'remove app')

  // payments: the client API, a payment, then the merchant moves its money.
  const vault = async (type: string, value: string) => {
    const response = await request({ method: 'POST', url: '/vault', headers: { ...json, ...VERSION }, payload: JSON.stringify({ type, value }) })
    ok(response, 200, 'vault')
    return response.json() as { token: string }
  }
  const payment = await request({
    method: 'POST',
    url: '/payments',
    headers: { ...json, ...VERSION },
    payload: JSON.stringify({
      integration: { key: merchant.key },
      amount: { currency: 'EUR', exponent: 2, value: 1000 },
      card: { number: await vault('pcn', '4111111111111111'), code: await vault('pcsc', '987'), expiry: { month: 1, year: 2031 } },
      test: { tds: { challenge: false, fingerprint: 'unavailable' } },
      hints: [],
    }),
  })
  ok(payment, 200, 'payment')
  const transactionId = (JSON.parse(payment.body) as { authorizationId: string }).authorizationId

  // A payment through 3-D Secure: the fingerprint frame, then the challenge, as a browser runs them.
  const secure = {
    integration: { key: merchant.key },
    amount: { currency: 'EUR', exponent: 2, value: 700 },
    card: { number: await vault('pcn', '4111111111111111'), code: await vault('pcsc', '987'), expiry: { month: 1, year: 2031 } },
    test: { tds: { challenge: true } },
  }
  let hints: string[] = []
  const frameHints = (html: string) => JSON.parse(/postMessage\(\{hints:(\[[^\]]*\])\}/.exec(html)?.[1] ?? '[]') as string[]
  const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' }
  for (let round = 0; ; round++) {
    assert.ok(round < 6, 'the 3-D Secure loop ends')
    const step = await request({ method: 'POST', url: '/payments', headers: { ...json, ...VERSION }, payload: JSON.stringify({ ...secure, hints }) })
    ok(step, 200, '3-D Secure payment')
    const result = JSON.parse(step.body) as { challenges?: Array<{ name: string; type: string; path: string }> }
    const challenge = result.challenges?.[0]
    if (!challenge) break
    const answer = await request({ method: 'POST', url: challenge.path, headers: { ...json, ...VERSION }, payload: JSON.stringify({ ...secure, hints }) })
    ok(answer, 200, challenge.name)
    const frame = JSON.parse(answer.body) as { action: string; fields: Record<string, string>; hints?: string[] }
    hints = [...hints, ...(frame.hints ?? [])]
    const action = new URL(frame.action).pathname
    const page = await request({ method: 'POST', url: action, headers: formHeaders, payload: form(frame.fields) })
    ok(page, 200, action)
    if (challenge.type === 'background-iframe') {
      hints = [...hints, ...frameHints(page.body)]
      continue
    }
    const code = /data-testid="tds-code">(\d{6})</.exec(page.body)?.[1] ?? ''
    const done = await request({ method: 'POST', url: `${action}/complete`, headers: formHeaders, payload: form({ creq: frame.fields.creq ?? '', code, decision: 'approve' }) })
    ok(done, 200, `${action}/complete`)
    hints = [...hints, ...frameHints(done.body)]
  }
  const money = (path: string, body: unknown, headers: Record<string, string> = {}) => request({ method: 'POST', url: path, headers: { ...auth, ...headers }, payload: JSON.stringify(body) })
  ok(await money(`/transactions/${transactionId}/captures`, { amount: 400 }), 201, 'capture')
  ok(await money(`/transactions/${transactionId}/captures`, { amount: 100 }, { 'idempotency-key': 'shape-1' }), 201, 'capture with an idempotency key')
  ok(await money(`/transactions/${transactionId}/refunds`, { amount: 200 }), 201, 'refund')
  ok(await money(`/transactions/${transactionId}/voids`, { amount: 500 }), 201, 'void')
  // Webhooks: an endpoint, so the recurring authorization below writes an event and its delivery.
  const hook = await money(`/merchants/${merchant.id}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['transaction.authorized'] })
  ok(hook, 201, 'register webhook')
  const webhookId = (hook.json() as { webhook: { id: string } }).webhook.id
  ok(await money(`/merchants/${merchant.id}/transactions`, { transactionId, currency: 'EUR', amount: 300 }), 201, 'recurring transaction')
  ok(await money(`/merchants/${merchant.id}/cards`, { transactionId, notes: 'regular' }), 201, 'save card')
  ok(await request({ method: 'POST', url: `/merchants/${merchant.id}/webhooks/${webhookId}/enable`, headers: auth }), 201, 'enable webhook')
  ok(await request({ method: 'POST', url: `/merchants/${merchant.id}/webhooks/${webhookId}/rotate-secret`, headers: auth }), 201, 'rotate webhook secret')
  const events = await traced.app.inject({ method: 'GET', url: `/merchants/${merchant.id}/events?limit=1`, headers: auth })
  const eventId = (events.json() as Array<{ id: string }>)[0]?.id
  ok(await money(`/merchants/${merchant.id}/events/${eventId}/resend`, {}), 201, 'resend event')
  ok(await request({ method: 'DELETE', url: `/merchants/${merchant.id}/webhooks/${webhookId}`, headers: auth }), 204, 'remove webhook')

  // The dashboard: a sign-in with the key, then sign-out with the session cookie and its CSRF token.
  const signIn = await request({ method: 'POST', url: '/dashboard/session', headers: json, payload: JSON.stringify({ key: app.key }) })
  ok(signIn, 201, 'dashboard sign-in')
  const cookie = String([signIn.headers['set-cookie']].flat()[0]).split(';')[0]
  const csrf = (signIn.json() as { session: { csrfToken: string } }).session.csrfToken
  ok(await request({ method: 'DELETE', url: '/dashboard/session', headers: { cookie, 'x-csrf-token': csrf } }), 204, 'dashboard sign-out')

  // A merchant user: a sign-in link by e-mail (sent after the answer: the request waits for the
  // mail), followed; a passkey registration and a passkey sign-in with forged answers; a passkey
  // removed; sign-out.
  const userEmail = 'ana@example.com'
  ok(await request({ method: 'POST', url: `/merchants/${merchant.id}/users`, headers: auth, payload: JSON.stringify({ email: userEmail }) }), 201, 'invite a dashboard user')
  const outbox = traced.test.database.db as Kysely<PaymentsTables>
  let mail = ''
  const mailed = async () => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && !mail; await new Promise((resolve) => setTimeout(resolve, 10))) {
      const rows = await outbox.selectFrom('payments_outbox').select('body').where('recipient', '=', userEmail).where('body', 'like', '%#sign-in=%').execute()
      mail = rows[0]?.body ?? ''
    }
  }
  ok(await request({ method: 'POST', url: '/dashboard/sign-in-link', headers: json, payload: JSON.stringify({ email: userEmail }) }, mailed), 202, 'ask for a sign-in link')
  const linkToken = /#sign-in=([A-Za-z0-9_-]+)/.exec(mail)?.[1] ?? ''
  const followed = await request({ method: 'POST', url: '/dashboard/session/link', headers: json, payload: JSON.stringify({ token: linkToken }) })
  ok(followed, 201, 'follow the sign-in link')
  const userCookie = String([followed.headers['set-cookie']].flat()[0]).split(';')[0]
  const userCsrf = (followed.json() as { session: { csrfToken: string } }).session.csrfToken
  const asUser = { cookie: userCookie, 'x-csrf-token': userCsrf }
  const creation = await request({ method: 'POST', url: '/dashboard/passkeys/registration/options', headers: asUser })
  ok(creation, 200, 'passkey registration options')
  const registration = forgedCredential((creation.json() as { challenge: string }).challenge, { attestationObject: 'eA' })
  ok(await request({ method: 'POST', url: '/dashboard/passkeys', headers: { ...asUser, ...json }, payload: JSON.stringify({ credential: registration }) }), 400, 'a forged passkey registration')
  const requested = await request({ method: 'POST', url: '/dashboard/passkeys/login/options' })
  ok(requested, 200, 'passkey login options')
  const assertion = forgedCredential((requested.json() as { challenge: string }).challenge, { authenticatorData: 'eA', signature: 'eA' })
  ok(await request({ method: 'POST', url: '/dashboard/session/passkey', headers: json, payload: JSON.stringify({ credential: assertion }) }), 401, 'a forged passkey sign-in')
  // A passkey as a finished registration stores it (a forged one stores none), which the user removes.
  const user = await outbox.selectFrom('payments_users').select('id').where('email', '=', userEmail).executeTakeFirstOrThrow()
  const passkey = { id: 'c2NlbmFyaW8', user_id: user.id, name: 'Scenario', public_key: 'eA', counter: 0, transports: '[]', created: new Date(0).toISOString(), last_used: null }
  await outbox.insertInto('payments_dashboard_passkeys').values(passkey).execute()
  ok(await request({ method: 'DELETE', url: `/dashboard/passkeys/${passkey.id}`, headers: asUser }), 204, 'a dashboard user removes a passkey')
  ok(await request({ method: 'DELETE', url: '/dashboard/session', headers: asUser }), 204, 'a dashboard user signs out')
}

/** A WebAuthn answer for `challenge` that no authenticator made: the ceremony's refusal still runs its statements. */
function forgedCredential(challenge: string, response: Record<string, string>) {
  return {
    id: 'Zm9yZ2Vk',
    rawId: 'Zm9yZ2Vk',
    type: 'public-key',
    clientExtensionResults: {},
    response: { clientDataJSON: Buffer.from(JSON.stringify({ challenge })).toString('base64url'), ...response },
  }
}

/** What a statement does to the distribution: which tables, keyed by their distribution column or not. */
export interface StatementShape {
  kind: 'select' | 'insert' | 'update' | 'delete' | 'transaction' | 'other'
  tables: string[]
  /** Columns the statement filters on (`"col" = $n`, `"col" in (…)`, `"col" < $n`…). */
  filters: string[]
  /** The distribution key values the statement names, per kind (from its parameters). */
  keys: Array<{ kind: KeyKind; value: string }>
  /** Why a distributed engine would send it to more than one shard (or to every node), if it would. */
  crosses?: string
}

const tableNames = (text: string) => [...new Set([...text.matchAll(/\b(?:from|into|update|join)\s+"?(\w+)"?/gi)].map((match) => match[1] ?? ''))].filter((name) => name in PLACEMENT)

export function shapeOf(statement: Statement): StatementShape {
  const text = statement.sql.trim().replace(/\s+/g, ' ')
  const verb = text.split(' ')[0]?.toLowerCase() ?? ''
  const kind: StatementShape['kind'] =
    verb === 'select' || verb === 'insert' || verb === 'update' || verb === 'delete' ? verb : /^(start|begin|commit|rollback|savepoint|release)/i.test(text) ? 'transaction' : 'other'
  const tables = tableNames(text)
  const where = / where (.*)$/i.exec(text)?.[1] ?? ''
  const filters = [...new Set([...where.matchAll(/"?(?:\w+"?\.)?"?(\w+)"? (?:=|<=|<|>=|>|in) /gi)].map((match) => match[1] ?? ''))]
  const keys: StatementShape['keys'] = []
  const target = tables[0]
  const placement = target === undefined ? undefined : PLACEMENT[target]
  let crosses: string | undefined
  if (kind === 'transaction' || target === undefined || placement === undefined) return { kind, tables, filters, keys }
  if (placement === 'reference') {
    if (kind !== 'select') crosses = `writes reference table ${target} (replicated to every node)`
    return { kind, tables, filters, keys, crosses }
  }
  if (placement === 'local') return { kind, tables, filters, keys }
  if (!('column' in placement)) return { kind, tables, filters, keys, crosses: `${target} has no ${placement.key} column (reaches it through ${placement.via.table})` }
  if (kind === 'insert') {
    const columns = [...(/\(([^)]*)\) values/i.exec(text)?.[1] ?? '').matchAll(/"?(\w+)"?/g)].map((match) => match[1])
    const index = columns.indexOf(placement.column)
    if (index < 0) crosses = `inserts into ${target} without ${placement.column}`
    else keys.push({ kind: placement.key, value: String(statement.parameters[index]) })
    return { kind, tables, filters, keys, crosses }
  }
  // Keyed when some table of the statement is filtered on its distribution column by one value
  // (a qualified column names its table; an unqualified one may belong to any table here). The
  // other distributed tables it reads must be distributed by the same key (co-located joins).
  for (const match of text.matchAll(/(?:"?(\w+)"?\.)?"?(\w+)"? = \$(\d+)/g)) {
    const [, qualifier, column, position] = match
    const owners = qualifier !== undefined ? [qualifier] : tables
    const owner = owners.find((table) => {
      const candidate = PLACEMENT[table]
      return candidate !== undefined && typeof candidate !== 'string' && 'column' in candidate && candidate.column === column
    })
    const ownerPlacement = owner === undefined ? undefined : PLACEMENT[owner]
    if (ownerPlacement !== undefined && typeof ownerPlacement !== 'string') keys.push({ kind: ownerPlacement.key, value: String(statement.parameters[Number(position) - 1]) })
  }
  const kinds = new Set(tables.flatMap((table) => {
    const candidate = PLACEMENT[table]
    return candidate === undefined || typeof candidate === 'string' ? [] : [candidate.key]
  }))
  if (keys.length === 0) {
    const several = new RegExp(`"?${placement.column}"? in \\(`).test(where)
    crosses = several ? `${kind} on ${target}: several ${placement.column} values at once (in (…))` : `${kind} on ${target} by ${filters.join(', ') || 'no filter'}, not by ${placement.column}`
  } else if (kinds.size > 1) {
    crosses = `${kind} joins tables of ${[...kinds].join(' and ')}`
  }
  return { kind, tables, filters, keys, crosses }
}

/**
 * The writes a batch statement (core/db/write-batch.ts: `with w0 as (…), w1 as (…) <last>`)
 * carries, each as a statement of its own with its placeholders numbered from $1 again; any
 * other statement as it is.
 */
export function partsOf(statement: Statement): Statement[] {
  const text = statement.sql.trim()
  if (!/^with w0 as \(/i.test(text)) return [statement]
  const parts: string[] = []
  let at = 0
  while (/^(with |, )?w\d+ as \(/i.test(text.slice(at))) {
    const open = text.indexOf('(', at)
    let depth = 0
    let close = open
    for (; close < text.length; close++) {
      if (text[close] === '(') depth++
      else if (text[close] === ')' && --depth === 0) break
    }
    parts.push(text.slice(open + 1, close))
    at = close + 1
  }
  parts.push(text.slice(at).trim())
  return parts.map((sql) => {
    const numbers = [...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]))
    const first = numbers.length === 0 ? 1 : Math.min(...numbers)
    const last = numbers.length === 0 ? 0 : Math.max(...numbers)
    return {
      sql: sql.replace(/\$(\d+)/g, (_match, index: string) => `$${Number(index) - first + 1}`),
      parameters: statement.parameters.slice(first - 1, last),
      durationMs: statement.durationMs,
    }
  })
}

/** The statements of a request cut into what ran together: each transaction, and each statement outside one (a batch's writes one by one). */
export function unitsOf(statements: Statement[]): Statement[][] {
  const units: Statement[][] = []
  let open: Statement[] | undefined
  for (const statement of statements.flatMap(partsOf)) {
    const text = statement.sql.trim().toLowerCase()
    if (text.startsWith('start transaction') || text === 'begin') {
      open = []
      units.push(open)
    } else if (open && (text === 'commit' || text === 'rollback')) {
      open = undefined
    } else if (open) {
      open.push(statement)
    } else {
      units.push([statement])
    }
  }
  return units
}

/** A short, stable name of a statement for docs/scaling.md: its verb, tables and filter columns. */
export function signatureOf(statement: Statement): string {
  const shape = shapeOf(statement)
  return `${shape.kind} ${shape.tables.join(' + ')} by ${shape.filters.join(', ') || 'nothing'}`
}
