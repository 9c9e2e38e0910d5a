// Yardsticks on PostgreSQL (issue 36, item 1): Triad on a PostgreSQL database of its own against
// a bare Fastify + node-postgres server doing the least work the route needs with ONE prepared
// statement (bench/servers/transaction-get-pg.ts), same bytes, alternating rounds in one run.
// Figures per route: req/s ratio (Triad ÷ yardstick, of the summed rounds), and per request the
// CPU of each Node process and of the PostgreSQL backends serving it, read from /proc/<pid>/stat
// of the backends pg_stat_activity lists for the database (the yardstick's connections carry the
// application_name `yardstick`; pg_stat_statements needs shared_preload_libraries, which a shared
// cluster rarely has). Needs the PostgreSQL server on this machine (its /proc) and the right to
// CREATE DATABASE; the database is dropped at the end.
// Usage: node bench/pg-yardsticks.ts [--url postgres://127.0.0.1:5432/test --rounds 3 --duration 5 --connections 16 --smoke]
//   --profile: Triad runs under --cpu-prof; its top self-time functions in the measured rounds are printed
import autocannon from 'autocannon'
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { Kysely } from 'kysely'
import pg from 'pg'
import { createDb } from '../src/core/db/create-db.ts'
import { parsePostgresUrl, type PostgresHost } from '../src/core/db/postgres-url.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { basicAuth, cpuMicros, monotonicUs, profileSelfTimes, reportRow, type RunningServer, seedAuthorizations, smoke, startBaseline, startTriad, verdict } from './lib.ts'

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.TEST_PG_URL ?? 'postgres://127.0.0.1:5432/test' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    smoke: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
})
const rounds = smoke ? 1 : Number(values.rounds)
const durationSeconds = smoke ? 1 : Number(values.duration)
const connections = Number(values.connections)
const command = 'node bench/pg-yardsticks.ts'
const YARDSTICK_APPLICATION = 'yardstick'
const WARM_UP_SECONDS = 10

interface Figures {
  requests: number
  p99: number
  /** CPU µs per request: the Node process, and the PostgreSQL backends serving it. */
  nodeUs: number
  backendUs: number
  /** CPU µs per second of the other side's backends meanwhile (Triad's: its background work, idle of requests). */
  otherBackendUsPerSecond: number
  errors: number
}

// As Triad reads the URL: without a user name, the operating-system user's (as libpq).
const parsed = parsePostgresUrl(values.url)
const adminUrl = parsed.forHost(parsed.hosts[0] as PostgresHost)
const admin = new pg.Client({ connectionString: adminUrl })
try {
  await admin.connect()
} catch (error) {
  console.log(`skipped: no PostgreSQL at ${values.url} (${(error as Error).message})`)
  reportRow({ benchmark: 'pg-yardsticks', measure: 'pg-yardsticks: skipped', target: '—', figure: `no PostgreSQL at ${values.url}`, met: null, command })
  process.exit(0)
}
const database = `bench_pg_yardsticks_${process.pid}`
const benchUrl = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${database}$1`)
await admin.query(`create database "${database}"`)

/** The backends connected to the bench database, by pid: the yardstick's or Triad's. */
async function backends(): Promise<Map<number, 'yardstick' | 'triad'>> {
  const { rows } = await admin.query<{ pid: number; application_name: string }>(
    "select pid, application_name from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
    [database],
  )
  return new Map(rows.map((row) => [row.pid, row.application_name === YARDSTICK_APPLICATION ? 'yardstick' : 'triad']))
}

const backendCpu = (pid: number) => (existsSync(`/proc/${pid}/stat`) ? cpuMicros(pid) : 0)

/** One autocannon run against `server`, with its Node CPU and the CPU of the backends of `side`. */
async function load(server: RunningServer, side: 'yardstick' | 'triad', path: string, headers: Record<string, string>, seconds: number): Promise<Figures> {
  const before = await backends()
  const backendBefore = new Map([...before.keys()].map((pid) => [pid, backendCpu(pid)]))
  const nodeBefore = cpuMicros(server.pid)
  const result = await autocannon({ url: `${server.url}${path}`, headers, connections, duration: seconds })
  const nodeUs = cpuMicros(server.pid) - nodeBefore
  const after = await backends()
  let backendUs = 0
  let otherUs = 0
  // A backend that left during the run takes its CPU with it: a pool's idle timeout is longer
  // than a round, so none should.
  for (const [pid, owner] of after) {
    const used = backendCpu(pid) - (backendBefore.get(pid) ?? 0)
    if (owner === side) backendUs += used
    else otherUs += used
  }
  const requests = result.requests.total
  return {
    requests,
    p99: result.latency.p99,
    nodeUs: nodeUs / Math.max(requests, 1),
    backendUs: backendUs / Math.max(requests, 1),
    otherBackendUsPerSecond: otherUs / seconds,
    errors: result.errors + result.non2xx,
  }
}

const sum = (items: Figures[], pick: (f: Figures) => number) => items.reduce((total, item) => total + pick(item), 0)
const weighted = (items: Figures[], pick: (f: Figures) => number) => sum(items, (f) => pick(f) * f.requests) / Math.max(sum(items, (f) => f.requests), 1)
const median = (items: number[]) => [...items].sort((a, b) => a - b)[Math.floor(items.length / 2)] ?? Number.NaN

const work = mkdtempSync(join(tmpdir(), 'triad-pg-yardsticks-'))
const profileDir = join(work, 'profile')
/** When the measured rounds began (CLOCK_MONOTONIC µs): the profile is summarised from there. */
const measured = { fromUs: Number.POSITIVE_INFINITY }
const servers: RunningServer[] = []
try {
  const triad = await startTriad({ DATABASE_URL: benchUrl, PAYMENTS_RATE_LIMIT: '0', ...(values.profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}) })
  servers.push(triad)
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${triad.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    const text = await response.text()
    if (response.status >= 300) throw new Error(`POST ${path}: ${response.status} ${text}`)
    return text
  }
  const app = (JSON.parse(await post('/apps', {})) as { app: { key: string; id: string } }).app
  const headers = { authorization: basicAuth(app.key) }
  const merchant = (
    JSON.parse(await post('/merchants', { currency: 'EUR', email: 'bench@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true }, headers)) as {
      merchant: { id: string }
    }
  ).merchant
  const seeder = await createDb(benchUrl, { poolSize: 1 })
  const [readId] = await seedAuthorizations(seeder.db as Kysely<PaymentsTables>, seeder.dialect, merchant.id, 1, { tds: 'full' })
  await seeder.destroy()
  // The read: an authorization with one capture on its trail.
  await post(`/transactions/${readId}/captures`, { amount: 100 }, headers)

  const settings = join(work, 'transaction-get-pg.json')
  writeFileSync(settings, JSON.stringify({ url: benchUrl, apps: { [app.key]: app.id } }))
  const yardstick = await startBaseline('transaction-get-pg.ts', { YARDSTICK_CONFIG: settings })
  servers.push(yardstick)
  const path = `/transactions/${readId}`
  const [ours, theirs] = await Promise.all([triad, yardstick].map(async (server) => (await fetch(`${server.url}${path}`, { headers })).text()))
  if (ours !== theirs) throw new Error(`GET /transactions/{id}: the yardstick's bytes differ from Triad's\n${ours}\n${theirs}`)

  console.log(
    `# PostgreSQL yardsticks — ${cpus().length} cores, Node ${process.version}, ${values.url.replace(/\/\/[^@/]*@/, '//')}; ${rounds} round(s) × ${durationSeconds} s, ${connections} connections`,
  )
  // A warm-up of each (pools fill, statements get prepared, V8 optimises: Triad's CPU per request
  // still falls for several seconds), not counted.
  await load(triad, 'triad', path, headers, smoke ? 1 : WARM_UP_SECONDS)
  await load(yardstick, 'yardstick', path, headers, smoke ? 1 : WARM_UP_SECONDS)
  const t: Figures[] = []
  const y: Figures[] = []
  measured.fromUs = monotonicUs()
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['triad', 'yardstick'] as const) : (['yardstick', 'triad'] as const)
    for (const side of order) {
      if (side === 'triad') t.push(await load(triad, 'triad', path, headers, durationSeconds))
      else y.push(await load(yardstick, 'yardstick', path, headers, durationSeconds))
    }
    const [a, b] = [t[round] as Figures, y[round] as Figures]
    console.log(
      `  get round ${round + 1}: triad ${(a.requests / durationSeconds).toFixed(0)} req/s (p99 ${a.p99} ms; CPU node ${a.nodeUs.toFixed(0)}, postgres ${a.backendUs.toFixed(0)} µs/req) · ` +
        `yardstick ${(b.requests / durationSeconds).toFixed(0)} req/s (p99 ${b.p99} ms; CPU node ${b.nodeUs.toFixed(0)}, postgres ${b.backendUs.toFixed(0)} µs/req)`,
    )
  }
  const ratio = sum(t, (f) => f.requests) / Math.max(sum(y, (f) => f.requests), 1)
  const backendRatio = weighted(t, (f) => f.backendUs) / weighted(y, (f) => f.backendUs)
  const errors = sum(t, (f) => f.errors) + sum(y, (f) => f.errors)
  const rate = (items: Figures[]) => (sum(items, (f) => f.requests) / (items.length * durationSeconds)).toFixed(0)
  const cpu = (items: Figures[], pick: (f: Figures) => number) => weighted(items, pick).toFixed(0)
  const figure =
    `${ratio.toFixed(2)} (${rate(t)} vs ${rate(y)} req/s; p99 ${median(t.map((f) => f.p99))}/${median(y.map((f) => f.p99))} ms; ` +
    `PostgreSQL CPU ${cpu(t, (f) => f.backendUs)}/${cpu(y, (f) => f.backendUs)} µs/req = ${backendRatio.toFixed(2)}×; Node CPU ${cpu(t, (f) => f.nodeUs)}/${cpu(y, (f) => f.nodeUs)} µs/req; ` +
    `Triad's backends while the yardstick ran ${(sum(y, (f) => f.otherBackendUsPerSecond) / Math.max(y.length, 1) / 1000).toFixed(1)} ms/s` +
    `${errors ? `; ${errors} errors` : ''})`
  console.log(`get: ${figure}`)
  reportRow({
    benchmark: 'pg-yardsticks',
    measure:
      'PostgreSQL: GET /transactions/{id} (one capture on its trail) ÷ yardstick running one prepared SELECT (Triad\'s statement: the transaction, the app\'s membership and the trail joined) over a pool of 10, same bytes; and the PostgreSQL backends\' CPU per request, Triad ÷ yardstick',
    target: '≥ 0.8; CPU ≤ 1.5×',
    figure,
    met: verdict(ratio >= 0.8 && backendRatio <= 1.5 && errors === 0),
    command,
  })
} finally {
  await Promise.all(servers.map((server) => server.stop()))
  await admin.query(`drop database if exists "${database}" with (force)`)
  await admin.end()
}

if (values.profile) {
  for (const file of readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile'))) {
    const { busyUs, functions } = profileSelfTimes(join(profileDir, file), [[measured.fromUs, Number.POSITIVE_INFINITY]])
    if (busyUs === 0) continue
    console.log(`\nTriad in the measured rounds, self time (${(busyUs / 1e6).toFixed(1)} s busy; ${join(profileDir, file)}):`)
    const self = new Map<string, number>()
    for (const { functionName, url, lineNumber, us } of functions) {
      const name = `${functionName || '(anonymous)'} ${url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`
      self.set(name, (self.get(name) ?? 0) + us)
    }
    for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${((100 * us) / busyUs).toFixed(1).padStart(5)} %  ${name}`)
  }
}
