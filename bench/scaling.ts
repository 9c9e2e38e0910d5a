// The figures of docs/scaling.md's capacity model, on PostgreSQL:
//  1. statements and round trips per route (every write route once, in process, Kysely's log hook);
//  2. server CPU per request per route on one instance (from /proc), and the PostgreSQL
//     backends' CPU per request (the backends our instances opened, found by application_name);
//  3. captures and chat turns per second one PostgreSQL primary takes, with one instance and with
//     two over the same database (the load split between them, same run).
// Usage: node bench/scaling.ts [--smoke] [--duration 5] [--connections 16] [--pg postgres://127.0.0.1:5432/test]
import autocannon from 'autocannon'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import { createDb } from '../src/core/db/create-db.ts'
import { runWriteScenarios, startTracedApp } from '../test/helpers/write-scenarios.ts'
import { spawn } from 'node:child_process'
import { mkdtempSync, openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { basicAuth, cpuMicros, freePort, reportRow, type RunningServer, stopper } from './lib.ts'

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    pg: { type: 'string', default: process.env.BENCH_PG_URL ?? 'postgres://127.0.0.1:5432/test' },
  },
})
const smoke = values.smoke === true
const durationSeconds = smoke ? 1 : Number(values.duration)
const connections = smoke ? 4 : Number(values.connections)
const pgUrl = values.pg ?? ''
const command = `node bench/scaling.ts${smoke ? ' --smoke' : ` --duration ${durationSeconds} --connections ${connections}`}`
const APPLICATION = `triad-bench-${randomBytes(3).toString('hex')}`

/**
 * `triad serve` on a free port, logging to a file, like lib.ts's startTriad, but waiting up to
 * two minutes for it (migrating an empty schema on a loaded machine takes a while) and killing
 * it if it never answers.
 */
async function startTriad(env: Record<string, string>): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'triad-scaling-'))
  const port = await freePort()
  const child = spawn(process.execPath, [new URL('../bin/triad.js', import.meta.url).pathname, 'serve', '--port', String(port)], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', openSync(join(dir, 'triad.log'), 'a'), 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    // /readyz, not /healthz: while migrations run the port already answers /healthz.
    if (await fetch(`${url}/readyz`).then((response) => response.ok, () => false)) break
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`triad did not start (log: ${join(dir, 'triad.log')})`)
    }
    await sleep(200)
  }
  return { url, pid: child.pid ?? 0, stop: stopper(child) }
}

const cleanups: Array<() => Promise<void> | void> = []
const cleanup = { after: (fn: () => Promise<void> | void) => void cleanups.push(fn) }

async function statementsPerRoute(): Promise<void> {
  process.env.TEST_DATABASE_URL = pgUrl
  const traced = await startTracedApp(cleanup, { AUTHN_ADMIN_EMAIL: 'admin@example.org', AUTHN_ADMIN_PASSWORD: 'correct horse battery', LOG_LEVEL: 'silent' })
  await runWriteScenarios(traced)
  console.log('\nStatements per request (PostgreSQL; every statement is one round trip: pg sends them one by one)')
  console.log(`  ${'route'.padEnd(48)} ${'status'.padStart(6)} ${'statements'.padStart(10)} ${'transactions'.padStart(12)}`)
  for (const trace of traced.traces) {
    const transactions = trace.statements.filter((statement) => /^start transaction/i.test(statement.sql.trim())).length
    console.log(`  ${trace.route.padEnd(48)} ${String(trace.status).padStart(6)} ${String(trace.statements.length).padStart(10)} ${String(transactions).padStart(12)}`)
  }
  const capture = traced.traces.find((trace) => trace.route === 'POST /transactions/:transactionId/captures')
  const chat = traced.traces.find((trace) => trace.route === 'POST /v1/chat')
  reportRow({ benchmark: 'scaling', measure: 'round trips per capture (PostgreSQL)', target: '—', figure: String(capture?.statements.length), met: null, command })
  reportRow({ benchmark: 'scaling', measure: 'round trips per chat turn (PostgreSQL)', target: '—', figure: String(chat?.statements.length), met: null, command })
}

/** CPU (µs) of the PostgreSQL backends our instances opened, by pid. */
async function backendCpu(db: Awaited<ReturnType<typeof createDb>>['db']): Promise<Map<number, number>> {
  const rows = await sql<{ pid: number }>`select pid from pg_stat_activity where application_name = ${APPLICATION}`.execute(db)
  const cpu = new Map<number, number>()
  for (const { pid } of rows.rows) {
    try {
      cpu.set(pid, cpuMicros(pid))
    } catch {}
  }
  return cpu
}

interface Load {
  name: string
  method: 'GET' | 'POST'
  path: () => string
  body?: () => string
  headers?: Record<string, string>
}

interface Result {
  perSecond: number
  triadCpuUs: number
  postgresCpuUs: number
  p99Ms: number
  non2xx: number
}

async function drive(servers: RunningServer[], load: Load, observer: Awaited<ReturnType<typeof createDb>>['db'], seconds = durationSeconds): Promise<Result> {
  const triadBefore = servers.map((server) => cpuMicros(server.pid))
  const pgBefore = await backendCpu(observer)
  const results = await Promise.all(
    servers.map((server) =>
      autocannon({
        url: server.url,
        connections: Math.max(1, Math.round(connections / servers.length)),
        duration: seconds,
        requests: [
          {
            method: load.method,
            headers: { 'content-type': 'application/json', ...load.headers },
            setupRequest: (request) => ({ ...request, path: load.path(), ...(load.body ? { body: load.body() } : {}) }),
          },
        ],
      }),
    ),
  )
  const pgAfter = await backendCpu(observer)
  const requests = results.reduce((sum, result) => sum + result.requests.total, 0)
  const triadCpu = servers.reduce((sum, server, index) => sum + cpuMicros(server.pid) - (triadBefore[index] ?? 0), 0)
  let pgCpu = 0
  for (const [pid, after] of pgAfter) pgCpu += after - (pgBefore.get(pid) ?? after)
  return {
    perSecond: requests / seconds,
    triadCpuUs: triadCpu / Math.max(requests, 1),
    postgresCpuUs: pgCpu / Math.max(requests, 1),
    p99Ms: Math.max(...results.map((result) => result.latency.p99)),
    non2xx: results.reduce((sum, result) => sum + result.non2xx + result.errors, 0),
  }
}

async function throughput(): Promise<void> {
  const schema = `bench_${randomBytes(4).toString('hex')}`
  const observer = await createDb(pgUrl, { poolSize: 1 })
  await sql`create schema ${sql.id(schema)}`.execute(observer.db)
  cleanups.push(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(observer.db)
    await observer.destroy()
  })
  const url = new URL(pgUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  url.searchParams.set('application_name', APPLICATION)
  const env = {
    DATABASE_URL: url.toString(),
    // One secrets file for both instances, as a deployment shares its secrets.
    TRIAD_SECRETS_FILE: join(mkdtempSync(join(tmpdir(), 'triad-scaling-secrets-')), 'secrets.json'),
    AUTHN_ADMIN_EMAIL: 'admin@example.org',
    AUTHN_ADMIN_PASSWORD: 'correct horse battery',
    AVATAR_MOCK_TOKEN_DELAY: '0s',
    AVATAR_RATE_LIMIT: '0',
    PAYMENTS_RATE_LIMIT: '0',
  }
  const first = await startTriad(env)
  cleanups.push(() => first.stop())

  // Fixtures through the API: an app, a merchant, authorizations large enough for every capture.
  const json = { 'content-type': 'application/json' }
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${first.url}${path}`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) })
    const text = await response.text()
    if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`)
    return JSON.parse(text)
  }
  const app = (await post('/apps', {})).app as { key: string }
  const merchant = (await post('/merchants', { currency: 'EUR', email: 'b@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true }, { authorization: basicAuth(app.key) }))
    .merchant as { key: string }
  const transactions: string[] = []
  for (let index = 0; index < (smoke ? 20 : 200); index++) {
    const vault = async (type: string, value: string) => post('/vault', { type, value }, { 'accept-version': '1' })
    const payment = await post(
      '/payments',
      {
        integration: { key: merchant.key },
        amount: { currency: 'EUR', exponent: 2, value: 1_000_000_000 },
        card: { number: await vault('pcn', '4111111111111111'), code: await vault('pcsc', '987'), expiry: { month: 1, year: 2031 } },
        test: { tds: { challenge: false, fingerprint: 'unavailable' } },
        hints: [],
      },
      { 'accept-version': '1' },
    )
    transactions.push(payment.authorizationId as string)
  }
  const csrf = await fetch(`${first.url}/server/api/security/csrf`)
  const xsrf = csrf.headers.get('dspace-xsrf-token') ?? ''
  const cookie = csrf.headers.getSetCookie().map((item) => item.split(';')[0]).join('; ')
  const login = await fetch(`${first.url}/server/api/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-xsrf-token': xsrf, cookie },
    body: 'user=admin%40example.org&password=correct+horse+battery',
  })
  const token = login.headers.get('authorization') ?? ''

  let next = 0
  const pick = () => transactions[next++ % transactions.length] ?? ''
  const auth = { authorization: basicAuth(app.key) }
  const loads: Load[] = [
    { name: 'GET /healthz', method: 'GET', path: () => '/healthz' },
    { name: 'GET /api/authn/status (token)', method: 'GET', path: () => '/api/authn/status', headers: { authorization: token } },
    { name: 'GET /transactions/{id}', method: 'GET', path: () => `/transactions/${pick()}`, headers: auth },
    { name: 'POST /transactions/{id}/captures', method: 'POST', path: () => `/transactions/${pick()}/captures`, body: () => '{"amount":1}', headers: auth },
    { name: 'POST /v1/chat (mock model, 200 sessions)', method: 'POST', path: () => '/v1/chat', body: () => JSON.stringify({ sessionId: `s-${next++ % 200}`, userText: 'Hello there' }) },
  ]
  console.log(`\nOne instance over PostgreSQL: ${connections} connections, ${durationSeconds} s per route`)
  console.log(`  ${'route'.padEnd(42)} ${'req/s'.padStart(8)} ${'p99 ms'.padStart(8)} ${'Triad µs'.padStart(9)} ${'PG µs'.padStart(7)} ${'failed'.padStart(7)}`)
  const single = new Map<string, Result>()
  for (const load of loads) {
    // Unmeasured first: the JIT, and the pool's connections (a new backend costs PostgreSQL a fork).
    await drive([first], load, observer.db, smoke ? 1 : 2)
    const result = await drive([first], load, observer.db)
    single.set(load.name, result)
    console.log(
      `  ${load.name.padEnd(42)} ${result.perSecond.toFixed(0).padStart(8)} ${result.p99Ms.toFixed(1).padStart(8)} ${result.triadCpuUs.toFixed(0).padStart(9)} ${result.postgresCpuUs.toFixed(0).padStart(7)} ${String(result.non2xx).padStart(7)}`,
    )
    reportRow({ benchmark: 'scaling', measure: `${load.name}: Triad CPU per request, one instance (PostgreSQL)`, target: '—', figure: `${result.triadCpuUs.toFixed(0)} µs`, met: null, command })
    reportRow({ benchmark: 'scaling', measure: `${load.name}: PostgreSQL CPU per request`, target: '—', figure: `${result.postgresCpuUs.toFixed(0)} µs`, met: null, command })
  }

  const second = await startTriad(env)
  cleanups.push(() => second.stop())
  console.log(`\nThe same ${connections} connections split over two instances on the same database`)
  for (const load of loads.filter((item) => item.method === 'POST')) {
    const one = single.get(load.name)
    await drive([first, second], load, observer.db, smoke ? 1 : 2)
    const two = await drive([first, second], load, observer.db)
    console.log(
      `  ${load.name.padEnd(42)} ${two.perSecond.toFixed(0).padStart(8)} req/s (one instance: ${one?.perSecond.toFixed(0)})   Triad ${two.triadCpuUs.toFixed(0)} µs, PG ${two.postgresCpuUs.toFixed(0)} µs per request, failed ${two.non2xx}`,
    )
    reportRow({ benchmark: 'scaling', measure: `${load.name} per second, one instance`, target: '—', figure: one?.perSecond.toFixed(0) ?? '', met: null, command })
    reportRow({ benchmark: 'scaling', measure: `${load.name} per second, two instances, one PostgreSQL`, target: '—', figure: two.perSecond.toFixed(0), met: null, command })
  }
  const cores = readFileSync('/proc/cpuinfo', 'utf8').match(/^processor\s/gm)?.length ?? 0
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`\n(${cores} cores, load average ${load}; Triad and PostgreSQL share them)`)
}

try {
  await statementsPerRoute()
  await throughput()
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
process.exit(0)
