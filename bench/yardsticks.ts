// Same-work yardsticks (issue 16, item 1): each measured route of Triad against a bare Fastify
// server of bench/servers that does the route's essential work directly (no Triad code: the
// same SQLite statements with node:sqlite and Triad's pragmas, the same token verification with
// jose, the same response bytes), in alternating rounds of the same run; and the scaling of 8
// local syntheses at once. What each yardstick does is written in its file's header and in the
// `measure` of its row, so that Triad's fair wins (caches, group commit) show. The checkout
// (issue 27) has two: one running Triad's own statements and crypto (what is left is framework
// overhead), and one doing the least the six requests need (servers/checkout-least-work.ts),
// measured with Triad in the same rounds, one row each.
// Figures per route: req/s ratio (Triad ÷ yardstick, of the summed rounds), p50/p99, and each
// server's CPU µs per request (from /proc, which the machine's other load disturbs far less);
// for the checkout, authorizations/s and CPU per authorization (CPU ÷ payments authorized).
// Usage: node bench/yardsticks.ts [--rounds 3 --duration 5 --connections 20 --routes healthz,status,chat,get,capture,capture-least,checkout,synthesis
//   --profile (Triad runs under --cpu-prof; its top self-time functions are printed at the end)
//   --steps (checkout: each server's CPU per request of each of the six steps, one step at a time) --smoke]
import autocannon from 'autocannon'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { parseArgs } from 'node:util'
import type { Kysely } from 'kysely'
import { createDb } from '../src/core/db/create-db.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { basicAuth, cpuMicros, monotonicUs, profileSelfTimes, reportRow, type RunningServer, seedAuthorizations as seedAuthorizationRows, smoke, startBaseline, startTriad, verdict } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    routes: { type: 'string', default: 'healthz,status,chat,get,capture,capture-least,checkout,synthesis' },
    profile: { type: 'boolean', default: false },
    steps: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
  },
})
const rounds = smoke ? 1 : Number(values.rounds)
const durationSeconds = smoke ? 1 : Number(values.duration)
const connections = Number(values.connections)
const routes = new Set(values.routes.split(','))
const work = mkdtempSync(join(tmpdir(), 'triad-yardsticks-'))
const command = (route: string) => `node bench/yardsticks.ts --routes ${route}`

const EMAIL = 'bench-admin@example.org'
const PASSWORD = 'bench password 123'
const CSRF = 'bench-csrf-token'
const CAPTURE_TARGETS = 200
const clientHeaders = { 'content-type': 'application/json', 'accept-version': '1' }

interface Figures {
  requests: number
  seconds: number
  p50: number
  p99: number
  cpuUs: number
  /** The server's CPU over the run, µs. */
  cpuTotalUs: number
  errors: number
}

/** While true, runs are a warm-up (V8 compiles the hot paths): short and not counted. */
let warmingUp = false

/** One autocannon run against `server`, with the server's CPU per request from /proc. */
async function load(server: RunningServer, options: Partial<autocannon.Options>, countOf?: () => number): Promise<Figures> {
  const before = cpuMicros(server.pid)
  const result = await autocannon({ connections, duration: warmingUp ? 1 : durationSeconds, ...options, url: options.url ?? server.url })
  const cpu = cpuMicros(server.pid) - before
  const requests = countOf ? countOf() : result.requests.total
  return {
    requests,
    seconds: durationSeconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: cpu / Math.max(result.requests.total, 1),
    cpuTotalUs: cpu,
    errors: result.errors + result.non2xx,
  }
}

const median = (items: number[]) => [...items].sort((a, b) => a - b)[Math.floor(items.length / 2)] ?? Number.NaN
const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a')

/** Alternating rounds (who goes first alternates too), then one row. */
async function compareRoute(route: string, measure: string, target: number, triad: (round: number) => Promise<Figures>, yardstick: (round: number) => Promise<Figures>, unit = 'req/s') {
  const t: Figures[] = []
  const y: Figures[] = []
  // A warm-up of each, not counted (round -1: captures use their own slice of authorizations).
  warmingUp = true
  await triad(-1)
  await yardstick(-1)
  warmingUp = false
  measuredFromUs = Math.min(measuredFromUs, monotonicUs())
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      t.push(await triad(round))
      y.push(await yardstick(round))
    } else {
      y.push(await yardstick(round))
      t.push(await triad(round))
    }
    const a = t[round]
    const b = y[round]
    console.log(
      `  ${route} round ${round + 1}: triad ${fixed(a.requests / a.seconds)} ${unit} (p99 ${fixed(a.p99, 1)} ms, CPU ${fixed(a.cpuUs)} µs/req) · yardstick ${fixed(b.requests / b.seconds)} ${unit} (p99 ${fixed(b.p99, 1)} ms, CPU ${fixed(b.cpuUs)} µs/req)`,
    )
  }
  const rate = (items: Figures[]) => items.reduce((sum, item) => sum + item.requests, 0) / items.reduce((sum, item) => sum + item.seconds, 0)
  const ratio = rate(t) / rate(y)
  const errors = t.reduce((sum, item) => sum + item.errors, 0) + y.reduce((sum, item) => sum + item.errors, 0)
  const figure =
    `${ratio.toFixed(2)} (${fixed(rate(t))} vs ${fixed(rate(y))} ${unit}; p50 ${fixed(median(t.map((f) => f.p50)), 1)}/${fixed(median(y.map((f) => f.p50)), 1)} ms; ` +
    `p99 ${fixed(median(t.map((f) => f.p99)), 1)}/${fixed(median(y.map((f) => f.p99)), 1)} ms; CPU ${fixed(median(t.map((f) => f.cpuUs)))}/${fixed(median(y.map((f) => f.cpuUs)))} µs/req` +
    `${errors ? `; ${errors} errors` : ''})`
  console.log(`${route}: ${figure}`)
  reportRow({ benchmark: 'yardsticks', measure, target: `≥ ${target}`, figure, met: verdict(ratio >= target && errors === 0), command: command(route) })
}

/**
 * The checkout against both of its yardsticks in the same rounds (the order rotates, so each
 * goes first once in three rounds): two rows, each Triad ÷ one yardstick, in authorizations
 * per second, with each server's CPU per authorization (its CPU ÷ the payments it authorized).
 */
async function compareCheckout(merchantKey: string, triad: RunningServer, same: RunningServer, least: RunningServer) {
  const servers = [triad, same, least]
  const names = ['triad', 'same statements', 'least work']
  const figures: Figures[][] = [[], [], []]
  const run = (server: RunningServer) => {
    const done = { count: 0 }
    return load(server, { requests: checkoutRequests(merchantKey, done) }, () => done.count)
  }
  warmingUp = true
  for (const server of servers) await run(server)
  warmingUp = false
  measuredFromUs = Math.min(measuredFromUs, monotonicUs())
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < servers.length; turn++) {
      const index = (round + turn) % servers.length
      figures[index]?.push(await run(servers[index] as RunningServer))
    }
    console.log(
      `  checkout round ${round + 1}: ${names
        .map((name, index) => {
          const f = figures[index]?.[round] as Figures
          return `${name} ${fixed(f.requests / f.seconds)} authorizations/s (p99 ${fixed(f.p99, 1)} ms, CPU ${fixed(f.cpuTotalUs / Math.max(f.requests, 1))} µs/authorization)`
        })
        .join(' · ')}`,
    )
  }
  const sum = (items: Figures[], pick: (f: Figures) => number) => items.reduce((total, item) => total + pick(item), 0)
  const rate = (items: Figures[]) => sum(items, (f) => f.requests) / sum(items, (f) => f.seconds)
  const cpuPerAuthorization = (items: Figures[]) => sum(items, (f) => f.cpuTotalUs) / Math.max(sum(items, (f) => f.requests), 1)
  const [t = [], y = [], l = []] = figures
  const rows = [
    {
      yardstick: y,
      measure:
        "Checkout, a frictionless test payment as Paylike's client and a browser make it (6 requests: vault ×2, payment → fingerprint challenge, the challenge, the fingerprint frame, payment with both hints → authorization) ÷ yardstick running Triad's own statements and crypto (two COMMITs per payment, as Triad)",
      target: 0.6,
    },
    {
      yardstick: l,
      measure:
        'Checkout (the same 6 requests) ÷ least-work yardstick: no database at the vault, one SELECT of both tokens per payment round, one HMAC per signed hint, then both tokens spent, the sealed card, the transaction and its outbox event in one COMMIT',
      target: 0.8,
    },
  ]
  for (const { yardstick, measure, target } of rows) {
    const ratio = rate(t) / rate(yardstick)
    const errors = sum(t, (f) => f.errors) + sum(yardstick, (f) => f.errors)
    const figure =
      `${ratio.toFixed(2)} (${fixed(rate(t))} vs ${fixed(rate(yardstick))} authorizations/s; p50 ${fixed(median(t.map((f) => f.p50)), 1)}/${fixed(median(yardstick.map((f) => f.p50)), 1)} ms; ` +
      `p99 ${fixed(median(t.map((f) => f.p99)), 1)}/${fixed(median(yardstick.map((f) => f.p99)), 1)} ms; CPU ${fixed(cpuPerAuthorization(t))}/${fixed(cpuPerAuthorization(yardstick))} µs per authorization` +
      `${errors ? `; ${errors} errors` : ''})`
    console.log(`checkout: ${figure}`)
    reportRow({ benchmark: 'yardsticks', measure, target: `≥ ${target}`, figure, met: verdict(ratio >= target && errors === 0), command: command('checkout') })
  }
}

/**
 * `--steps`: where each server's CPU per authorization goes, one step at a time at saturation:
 * the four steps that change nothing (vault, the first payment, the challenge, the frame) posted
 * again and again with one body; the final payment once per checkout made beforehand up to it.
 * Each server is measured alone, so the figures add up to a little less than a checkout's
 * (the steps of a checkout share the connections and the event loop's turns).
 */
async function checkoutSteps(merchantKey: string, servers: Record<string, RunningServer>) {
  const finals = smoke ? 50 : 1000
  const table: Record<string, Record<string, number>> = {}
  for (const [name, server] of Object.entries(servers)) {
    const call = async (path: string, body: string, headers: Record<string, string> = clientHeaders) => (await fetch(`${server.url}${path}`, { method: 'POST', headers, body })).text()
    const number = JSON.parse(await call('/vault', '{"type":"pcn","value":"4111111111111111"}')) as unknown
    const code = JSON.parse(await call('/vault', '{"type":"pcsc","value":"123"}')) as unknown
    const first = checkoutBody(merchantKey, number, code, [])
    const answer = JSON.parse(await call('/payments/challenges/tds-fingerprint', first)) as { fields: Record<string, string> }
    const repeated: Record<string, Partial<autocannon.Options>> = {
      'POST /vault': { method: 'POST', headers: clientHeaders, body: '{"type":"pcn","value":"4111111111111111"}' },
      'POST /payments (first)': { method: 'POST', headers: clientHeaders, body: first },
      'POST /payments/challenges/tds-fingerprint': { method: 'POST', headers: clientHeaders, body: first, url: `${server.url}/payments/challenges/tds-fingerprint` },
      'POST /payments/tds/fingerprint (frame)': { method: 'POST', headers: FORM_HEADERS, body: new URLSearchParams(answer.fields).toString(), url: `${server.url}/payments/tds/fingerprint` },
    }
    const row: Record<string, number> = {}
    for (const [step, options] of Object.entries(repeated)) {
      const url = options.url ?? `${server.url}${step.includes('/vault') ? '/vault' : '/payments'}`
      warmingUp = true
      await load(server, { ...options, url })
      warmingUp = false
      row[step] = (await load(server, { ...options, url })).cpuUs
    }
    // The final payment: checkouts made up to it (both hints in hand), each then posted once.
    const bodies: string[] = []
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (bodies.length < finals) {
          const n = JSON.parse(await call('/vault', '{"type":"pcn","value":"4111111111111111"}')) as unknown
          const c = JSON.parse(await call('/vault', '{"type":"pcsc","value":"123"}')) as unknown
          const frame = JSON.parse(await call('/payments/challenges/tds-fingerprint', checkoutBody(merchantKey, n, c, []))) as { fields: Record<string, string>; hints: string[] }
          const page = await call('/payments/tds/fingerprint', new URLSearchParams(frame.fields).toString(), FORM_HEADERS)
          bodies.push(checkoutBody(merchantKey, n, c, [...frame.hints, ...frameHints(page)]))
        }
      }),
    )
    let next = 0
    const before = cpuMicros(server.pid)
    const result = await autocannon({ url: `${server.url}/payments`, connections, amount: bodies.length, requests: [{ method: 'POST', headers: clientHeaders, setupRequest: (request) => ({ ...request, body: bodies[next++] }) }] })
    row['POST /payments (final: authorization)'] = (cpuMicros(server.pid) - before) / Math.max(result.requests.total, 1)
    if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx + result.errors} final payments failed`)
    table[name] = row
  }
  const names = Object.keys(table)
  console.log(`\ncheckout, CPU µs per request of each step (alone, at saturation, ${connections} connections):`)
  console.log(`  ${'step'.padEnd(44)}${names.map((name) => name.padStart(17)).join('')}`)
  for (const step of Object.keys(table[names[0] ?? ''] ?? {})) {
    console.log(`  ${step.padEnd(44)}${names.map((name) => fixed(table[name]?.[step] ?? Number.NaN).padStart(17)).join('')}`)
  }
  const total = (name: string) => Object.entries(table[name] ?? {}).reduce((sum, [step, us]) => sum + (step === 'POST /vault' ? 2 * us : us), 0)
  console.log(`  ${'sum (vault twice)'.padEnd(44)}${names.map((name) => fixed(total(name)).padStart(17)).join('')}`)
}

// Triad, with every service, on a SQLite file of ours (the yardsticks work on copies of it).
const triadDb = join(work, 'triad.sqlite')
const profileDir = join(work, 'profile')
const triad = await startTriad({
  DATABASE_URL: `sqlite:${triadDb}`,
  PAYMENTS_RATE_LIMIT: '0',
  // The limiter stays on (in memory) so its cost is counted, with a budget the load never reaches.
  AVATAR_RATE_LIMIT: '100000000/min',
  AUTHN_ADMIN_EMAIL: EMAIL,
  AUTHN_ADMIN_PASSWORD: PASSWORD,
  ...(values.profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
})
const yardsticks: RunningServer[] = []
let copies = 0

/** A consistent copy of Triad's database as it is now, for a yardstick of its own. */
function copyOfTriadDb(): string {
  const path = join(work, `copy-${copies++}.sqlite`)
  const source = new DatabaseSync(triadDb)
  source.exec(`vacuum into '${path}'`)
  source.close()
  return path
}

async function startYardstick(file: string, settings: object): Promise<RunningServer> {
  const path = join(work, `${file}.json`)
  writeFileSync(path, JSON.stringify(settings))
  const server = await startBaseline(file, { YARDSTICK_CONFIG: path })
  yardsticks.push(server)
  return server
}

async function post(url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
  return { status: response.status, text: await response.text() }
}

async function seedAuthorizations(merchantId: string, count: number): Promise<string[]> {
  const database = await createDb(`sqlite:${triadDb}`)
  try {
    return await seedAuthorizationRows(database.db as Kysely<PaymentsTables>, database.dialect, merchantId, count, { tds: 'full' })
  } finally {
    await database.destroy()
  }
}

function captureRequests(key: string, targets: string[]): autocannon.Request[] {
  let next = 0
  return [
    {
      method: 'POST',
      headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
      body: '{"amount":1}',
      setupRequest: (request) => ({ ...request, path: `/transactions/${targets[next++ % targets.length]}/captures` }),
    },
  ]
}

interface Flow {
  number?: unknown
  code?: unknown
  fields?: Record<string, string>
  hints?: string[]
}

const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded' }

/** The hints a 3-D Secure frame page hands to its parent page. */
const frameHints = (html: string) => JSON.parse(/postMessage\(\{hints:(\[[^\]]*\])\}/.exec(html)?.[1] ?? '[]') as string[]

/** A frictionless test payment's body, as the client sends it on every round. */
function checkoutBody(merchantKey: string, number: unknown, code: unknown, hints: string[]): string {
  return JSON.stringify({
    integration: { key: merchantKey },
    amount: { currency: 'EUR', exponent: 2, value: 195 },
    card: { number, code, expiry: { month: 12, year: 2030 } },
    test: { tds: { challenge: false } },
    hints,
  })
}

/**
 * The six requests of a frictionless test payment, as Paylike's client and a browser make them,
 * looped per connection: vault ×2, the payment (answered with the fingerprint challenge), the
 * challenge (the frame's form and the first hint), the frame's form post (its page hands back
 * the second hint), the payment again with both hints. `done` counts authorizations.
 */
function checkoutRequests(merchantKey: string, done: { count: number }): autocannon.Request[] {
  const body = (context: Flow) => checkoutBody(merchantKey, context.number, context.code, context.hints ?? [])
  return [
    { method: 'POST', path: '/vault', headers: clientHeaders, body: '{"type":"pcn","value":"4111111111111111"}', onResponse: (_s, text, context: Flow) => void (context.number = JSON.parse(text)) },
    {
      method: 'POST',
      path: '/vault',
      headers: clientHeaders,
      body: '{"type":"pcsc","value":"123"}',
      onResponse: (_s, text, context: Flow) => void ((context.code = JSON.parse(text)), (context.hints = [])),
    },
    { method: 'POST', path: '/payments', headers: clientHeaders, setupRequest: (request, context: Flow) => ({ ...request, body: body(context) }) },
    {
      method: 'POST',
      path: '/payments/challenges/tds-fingerprint',
      headers: clientHeaders,
      setupRequest: (request, context: Flow) => ({ ...request, body: body(context) }),
      onResponse: (_s, text, context: Flow) => {
        const answer = JSON.parse(text) as { fields?: Record<string, string>; hints?: string[] }
        context.fields = answer.fields
        context.hints = answer.hints ?? []
      },
    },
    {
      method: 'POST',
      path: '/payments/tds/fingerprint',
      headers: FORM_HEADERS,
      setupRequest: (request, context: Flow) => ({ ...request, body: new URLSearchParams(context.fields).toString() }),
      onResponse: (_s, text, context: Flow) => void (context.hints = [...(context.hints ?? []), ...frameHints(text)]),
    },
    {
      method: 'POST',
      path: '/payments',
      headers: clientHeaders,
      setupRequest: (request, context: Flow) => ({ ...request, body: body(context) }),
      onResponse: (status, text) => {
        if (status === 200 && text.includes('authorizationId')) done.count++
      },
    },
  ]
}

/** One checkout as a client makes it, once; each answer's body, for the bytes the yardsticks must match. */
async function checkoutOnce(url: string, merchantKey: string): Promise<string[]> {
  const bodies: string[] = []
  const call = async (path: string, body: string, headers: Record<string, string> = clientHeaders) => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers, body })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`${url}${path} answered ${response.status} ${text}`)
    bodies.push(text)
    return text
  }
  const number = JSON.parse(await call('/vault', '{"type":"pcn","value":"4111111111111111"}')) as unknown
  const code = JSON.parse(await call('/vault', '{"type":"pcsc","value":"123"}')) as unknown
  await call('/payments', checkoutBody(merchantKey, number, code, []))
  const answer = JSON.parse(await call('/payments/challenges/tds-fingerprint', checkoutBody(merchantKey, number, code, []))) as { fields: Record<string, string>; hints: string[] }
  const page = await call('/payments/tds/fingerprint', new URLSearchParams(answer.fields).toString(), FORM_HEADERS)
  await call('/payments', checkoutBody(merchantKey, number, code, [...answer.hints, ...frameHints(page)]))
  return bodies
}

/** A body with its variable parts (tokens, MACs, ids, times) masked: what must match byte for byte, and the length. */
const shapeOf = (body: string) => `${body.length}:${body.replace(/[A-Za-z0-9_-]{8,}/g, '~')}`

/** Where a profile's function lives, for a summary by package: a dependency, a part of Triad, Node, or V8 itself. */
function groupOf(functionName: string, url: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native code)'
  const path = url.replace(/^file:\/\//, '')
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
  if (dependency) return dependency[1]
  const own = /\/(src\/[^/]+\/[^/]+)/.exec(path)
  if (own) return own[1]
  if (path.startsWith('node:internal/modules') || path.startsWith('node:internal/bootstrap')) return 'node: module loading'
  return path.startsWith('node:') ? `node: ${path.slice(5).split('/').slice(0, 2).join('/')}` : path
}

/**
 * Self time of a V8 .cpuprofile from `fromUs` on (the measured rounds, not start-up): the `top`
 * functions and packages, as shares of the busy time. Empty when no busy sample is that late
 * (the launcher's profile before its exec).
 */
function summariseProfile(path: string, fromUs: number, top = 12): string[] {
  const { busyUs, functions } = profileSelfTimes(path, [[fromUs, Number.POSITIVE_INFINITY]])
  if (busyUs === 0) return []
  const self = new Map<string, number>()
  const groups = new Map<string, number>()
  for (const { functionName, url, lineNumber, us } of functions) {
    const where = url ? `${url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}` : ''
    const name = `${functionName || '(anonymous)'} ${where}`.trim()
    self.set(name, (self.get(name) ?? 0) + us)
    const group = groupOf(functionName, url)
    groups.set(group, (groups.get(group) ?? 0) + us)
  }
  const share = (entries: Map<string, number>) =>
    [...entries.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => `${((100 * us) / busyUs).toFixed(1).padStart(5)} %  ${name}`)
  return [`busy ${(busyUs / 1e6).toFixed(1)} s CPU in the measured rounds; by package:`, ...share(groups), 'by function (self time):', ...share(self)]
}

/** When the first measured round began (CLOCK_MONOTONIC µs): profiles are summarised from there. */
let measuredFromUs = Number.POSITIVE_INFINITY

try {
  // Setup over HTTP, as clients do; the answers give the yardsticks Triad's bytes.
  const login = await fetch(`${triad.url}/api/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `DSPACE-XSRF-COOKIE=${CSRF}`, 'x-xsrf-token': CSRF },
    body: new URLSearchParams({ user: EMAIL, password: PASSWORD }).toString(),
  })
  const authorization = login.headers.get('authorization')
  if (login.status !== 200 || !authorization) throw new Error(`login failed: ${login.status}`)
  await login.text()
  const statusHeaders = { authorization, cookie: `DSPACE-XSRF-COOKIE=${CSRF}` }
  const statusBody = await (await fetch(`${triad.url}/api/authn/status`, { headers: statusHeaders })).text()

  const chatBody = JSON.stringify({ sessionId: 'bench-session', userText: 'Hello there, how are you today?' })
  const chatReply = await post(`${triad.url}/v1/chat`, JSON.parse(chatBody))

  const appKey = (JSON.parse((await post(`${triad.url}/apps`, {})).text) as { app: { key: string; id: string } }).app
  const merchant = (
    JSON.parse(
      (
        await post(
          `${triad.url}/merchants`,
          { currency: 'EUR', email: 'bench@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true },
          { 'content-type': 'application/json', authorization: basicAuth(appKey.key) },
        )
      ).text,
    ) as { merchant: { id: string; key: string } }
  ).merchant
  const apps = { [appKey.key]: appKey.id }
  // Authorizations to capture: one slice per round and a warm-up, the same ids on both sides.
  // Two sets of slices: the same-work comparison's, then the least-work one's (`leastSlice`).
  const captureIds = await seedAuthorizations(merchant.id, CAPTURE_TARGETS * (rounds + 1) * 2)
  const slice = (index: number) => captureIds.slice(index * CAPTURE_TARGETS, (index + 1) * CAPTURE_TARGETS)
  const leastSlice = (index: number) => slice(rounds + 1 + index)
  // The read: an authorization with one capture on its trail, captured before the copies.
  const [readId] = await seedAuthorizations(merchant.id, 1)
  await post(`${triad.url}/transactions/${readId}/captures`, { amount: 100 }, { 'content-type': 'application/json', authorization: basicAuth(appKey.key) })
  // One checkout against Triad: the bytes of its answers, which the checkout yardsticks repeat
  // (the fingerprint challenge as it is; the frame page around its hint).
  const triadCheckout = routes.has('checkout') ? await checkoutOnce(triad.url, merchant.key) : []
  const challengeBody = triadCheckout[2] ?? ''
  const framePage = (triadCheckout[4] ?? '').replace(/\{hints:\[[^\]]*\]\},"\*"\)/, '{hints:\u0000hints},\u0000origin)')
  if (routes.has('checkout') && (!challengeBody.includes('tds-fingerprint') || !framePage.includes('\u0000hints'))) {
    throw new Error(`an unexpected checkout from Triad: ${triadCheckout.join('\n')}`)
  }

  const cores = cpus().length
  console.log(
    `# Same-work yardsticks — ${cores} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; ${rounds} round(s) × ${durationSeconds} s, ${connections} connections`,
  )

  if (routes.has('healthz')) {
    const bare = await startYardstick('baseline.ts', {})
    await compareRoute(
      'healthz',
      'GET /healthz ÷ bare Fastify hello-world (no logger, no hooks)',
      0.85,
      () => load(triad, { url: `${triad.url}/healthz` }),
      () => load(bare, {}),
    )
  }

  if (routes.has('status')) {
    const key = randomBytes(32)
    const token = authorization.replace(/^Bearer /, '')
    // Triad's token re-signed with the yardstick's key: same header, same claims, same length.
    const resigned = await new SignJWT(decodeJwt(token)).setProtectedHeader(decodeProtectedHeader(token) as { alg: string }).sign(key)
    const yard = await startYardstick('authn-status.ts', { database: copyOfTriadDb(), key: key.toString('hex'), body: statusBody })
    await compareRoute(
      'status',
      'GET /api/authn/status with a valid token ÷ yardstick verifying the JWT (jose) and SELECTing the session on every request, same HAL bytes (Triad caches both up to 1 s)',
      0.7,
      () => load(triad, { url: `${triad.url}/api/authn/status`, headers: statusHeaders }),
      () => load(yard, { url: `${yard.url}/api/authn/status`, headers: { ...statusHeaders, authorization: `Bearer ${resigned}` } }),
    )
  }

  if (routes.has('chat')) {
    const yard = await startYardstick('avatar-chat.ts', { database: copyOfTriadDb(), body: chatReply.text, idleMs: 24 * 3_600_000 })
    const chat = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: chatBody }
    await compareRoute(
      'chat',
      'POST /v1/chat with a session (mock) ÷ yardstick parsing the body and upserting the session + inserting both messages, one COMMIT per request (Triad: group commit), same reply bytes',
      0.7,
      () => load(triad, { url: `${triad.url}/v1/chat`, ...chat }),
      () => load(yard, { url: `${yard.url}/v1/chat`, ...chat }),
    )
  }

  // The copies for the payments yardsticks are taken now, before any capture load.
  const paymentsCopy = routes.has('get') || routes.has('capture') ? copyOfTriadDb() : ''
  const headers = { authorization: basicAuth(appKey.key) }

  if (routes.has('get')) {
    const yard = await startYardstick('transaction-get.ts', { database: paymentsCopy, apps })
    const [ours, theirs] = await Promise.all([triad, yard].map(async (server) => (await fetch(`${server.url}/transactions/${readId}`, { headers })).text()))
    if (ours !== theirs) throw new Error(`GET /transactions/{id}: the yardstick's bytes differ from Triad's\n${ours}\n${theirs}`)
    await compareRoute(
      'get',
      "GET /transactions/{id} (one capture on its trail) ÷ yardstick running one SELECT by primary key (the transaction, the app's membership and the trail joined) on every request, same bytes — the least work the route needs, and Triad's own statement (Triad: read cache)",
      0.8,
      () => load(triad, { url: `${triad.url}/transactions/${readId}`, headers }),
      () => load(yard, { url: `${yard.url}/transactions/${readId}`, headers }),
    )
  }

  if (routes.has('capture')) {
    const yard = await startYardstick('capture.ts', { database: paymentsCopy, apps })
    // A fresh slice of authorizations per round on both sides (slice 0 for the warm-up).
    await compareRoute(
      'capture',
      'POST /transactions/{id}/captures ÷ yardstick running the same SELECT, ledger line, balance shard, trail entry, counters and trail read in one BEGIN IMMEDIATE…COMMIT per request (Triad: group commit), same bytes',
      0.7,
      (round) => load(triad, { requests: captureRequests(appKey.key, slice(round + 1)) }),
      (round) => load(yard, { requests: captureRequests(appKey.key, slice(round + 1)) }),
    )
  }

  if (routes.has('capture-least')) {
    const yard = await startYardstick('capture-least.ts', { database: copyOfTriadDb(), apps })
    await compareRoute(
      'capture-least',
      'POST /transactions/{id}/captures ÷ least-work yardstick: one conditional UPDATE of the counters (appending the trail entry to a JSON column, returning the row) and one ledger INSERT in one BEGIN IMMEDIATE…COMMIT per request, pricing kept in memory; no balance shard, webhook event or trail table (Triad: group commit), same bytes',
      0.7,
      (round) => load(triad, { requests: captureRequests(appKey.key, leastSlice(round + 1)) }),
      (round) => load(yard, { requests: captureRequests(appKey.key, leastSlice(round + 1)) }),
    )
  }

  if (routes.has('checkout')) {
    const database = copyOfTriadDb()
    const same = await startYardstick('checkout.ts', { database, challengeBody, framePage, origin: triad.url })
    const least = await startYardstick('checkout-least-work.ts', { database: copyOfTriadDb(), challengeBody, framePage, origin: triad.url })
    // Same bytes on the wire: each answer of each step, its variable parts masked, as Triad's.
    const expected = triadCheckout.map(shapeOf)
    for (const server of [same, least]) {
      const shapes = (await checkoutOnce(server.url, merchant.key)).map(shapeOf)
      shapes.forEach((shape, step) => {
        if (shape !== expected[step]) throw new Error(`checkout step ${step + 1}: the yardstick's answer differs from Triad's\n${expected[step]}\n${shape}`)
      })
    }
    await compareCheckout(merchant.key, triad, same, least)
    if (values.steps) await checkoutSteps(merchant.key, { triad, 'same statements': same, 'least work': least })
  }

  if (routes.has('synthesis')) {
    const text = 'The avatar speaks without any network at all. It turns your words into sound on this machine, sentence by sentence, and streams the audio back.'
    const synthesize = async () => {
      const response = await fetch(`${triad.url}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, format: 'mp3' }) })
      if (!response.ok) throw new Error(`POST /v1/tts answered ${response.status}`)
      await response.arrayBuffer()
    }
    await Promise.all(Array.from({ length: smoke ? 2 : 4 }, synthesize)) // workers start, WebAssembly compiles
    const one: number[] = []
    const eight: number[] = []
    measuredFromUs = Math.min(measuredFromUs, monotonicUs())
    for (let round = 0; round < rounds; round++) {
      for (let index = 0; index < (smoke ? 1 : 3); index++) {
        const started = performance.now()
        await synthesize()
        one.push(performance.now() - started)
      }
      const started = performance.now()
      await Promise.all(Array.from({ length: 8 }, synthesize))
      eight.push(performance.now() - started)
    }
    const single = 1000 / median(one)
    const parallel = (8 * 1000) / median(eight)
    const efficiency = parallel / (single * Math.min(8, cores))
    const figure = `${efficiency.toFixed(2)} (one at a time ${single.toFixed(2)}/s, 8 at once ${parallel.toFixed(2)}/s, ${cores} cores)`
    console.log(`synthesis: ${figure}`)
    reportRow({
      benchmark: 'yardsticks',
      measure: '8 local syntheses at once (POST /v1/tts, 140-char English, MP3): scaling efficiency = throughput(8) ÷ (throughput(1) × min(8, cores))',
      target: '≥ 0.8',
      figure,
      met: verdict(efficiency >= 0.8),
      command: command('synthesis'),
    })
  }
} finally {
  await Promise.all([triad.stop(), ...yardsticks.map((server) => server.stop())])
}

if (values.profile) {
  for (const file of readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile'))) {
    const lines = summariseProfile(join(profileDir, file), measuredFromUs)
    if (lines.length === 0) continue
    console.log(`\nTriad under load, where the CPU goes (${join(profileDir, file)}):`)
    for (const line of lines) console.log(`  ${line}`)
  }
}
