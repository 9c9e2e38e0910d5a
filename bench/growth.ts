// How cost grows with the data (issue 16, item 3). For each engine and size, a database is
// migrated with `triad migrate`, seeded in bulk (bench/growth-seed.ts: N transactions, N chat
// messages across min(10⁴, N/2) sessions) and served by its own `triad serve`; then every
// measured route is driven with autocannon, the sizes alternating within each round so that the
// machine's other load falls on all of them alike. Reported per size: req/s, p50/p99 latency and
// Triad's CPU µs per request; per route, the cost at the largest size over the smallest
// (req/s of the smallest ÷ req/s of the largest; target ≤ 1.5), and the database's bytes per row.
// Then Triad's RSS holding 10 000 idle SSE streams (the mock model paced an hour per token,
// held by client processes of bench/growth-sse-client.ts), and the time to first byte of the
// streams opened after them.
// Usage: node bench/growth.ts [--sizes 1e3,1e5,1e6] [--engines sqlite,postgres] [--rounds 3]
//   [--duration 3] [--connections 10] [--streams 10000] [--parts growth,sse] [--smoke: sizes
//   100,1000, SQLite, 1 round of 1 s, 100 streams; no verdicts]
//   [--pg postgres://127.0.0.1:5432/test] [--keep] (PostgreSQL: a database of its own per size,
//   created and dropped here; the database in --pg is only used to create them)
import autocannon from 'autocannon'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { type IncomingMessage, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { type Kysely, sql } from 'kysely'
import { createDb, type DialectName } from '../src/core/db/create-db.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import type { ChatTables } from '../src/services/avatar/modules/sessions/sessions.table.ts'
import { type AvatarSeed, type PaymentsSeed, seedAvatar, seedPayments } from './growth-seed.ts'
import { basicAuth, cpuMicros, reportRow, type RunningServer, startTriad, stopper } from './lib.ts'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    engines: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '10' },
    streams: { type: 'string' },
    parts: { type: 'string', default: 'growth,sse' },
    smoke: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    pg: { type: 'string', default: process.env.BENCH_PG_URL ?? 'postgres://127.0.0.1:5432/test' },
  },
})
const smoke = values.smoke
const sizes = (values.sizes ?? (smoke ? '100,1000' : '1e3,1e5,1e6')).split(',').map((size) => Math.round(Number(size)))
// Smoke mode (CI, every benchmark for a few seconds) stays on SQLite unless told otherwise.
const engines = (values.engines ?? (smoke ? 'sqlite' : 'sqlite,postgres')).split(',') as DialectName[]
const rounds = Number(values.rounds ?? (smoke ? 1 : 3))
const durationSeconds = Number(values.duration ?? (smoke ? 1 : 3))
const connections = Number(values.connections)
const streamCount = Number(values.streams ?? (smoke ? 100 : 10_000))
const parts = new Set(values.parts.split(','))
const root = new URL('..', import.meta.url).pathname
const command = `node bench/growth.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`
if (sizes.some((size) => !Number.isSafeInteger(size) || size < 10)) throw new Error('--sizes takes numbers of at least 10, such as 1e3,1e5')
for (const engine of engines) if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`unknown engine ${engine}`)

const PROBES = 200
const HISTORY_LENGTH = 10
const PAGE = 50

interface Deployment {
  engine: DialectName
  size: number
  server: RunningServer
  key: string
  merchantId: string
  payments: PaymentsSeed
  avatar: AvatarSeed
  seedSeconds: number
  bytes: { transactions: number; messages: number; total: number }
  drop(): Promise<void>
}

function fmtSize(size: number): string {
  const exponent = Math.log10(size)
  return Number.isInteger(exponent) ? `10^${exponent}` : String(size)
}

async function run(file: string, args: string[], env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, [join(root, file), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`${file} ${args.join(' ')} exited with ${code}`)
}

/** A fresh database for one size: a SQLite file, or a PostgreSQL database created here. */
async function freshDatabase(engine: DialectName, size: number): Promise<{ url: string; file?: string; drop(): Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'triad-growth-'))
    const file = join(dir, 'triad.sqlite')
    return { url: `sqlite:${file}`, file, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const name = `triad_growth_${process.pid}_${size}`
  // Over the database of --pg (createDb connects as the operating-system user, as psql does).
  const admin = async (statement: string) => {
    const database = await createDb(values.pg, { poolSize: 1 })
    try {
      await sql.raw(statement).execute(database.db)
    } finally {
      await database.destroy()
    }
  }
  await admin(`drop database if exists ${name} with (force)`)
  await admin(`create database ${name}`)
  const url = new URL(values.pg)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) }
}

async function post(url: string, body: unknown, key?: string): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: basicAuth(key) } : {}) },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

/** Bytes of the database per transaction (payments tables) and per message (avatar tables). */
async function databaseBytes(engine: DialectName, db: Kysely<unknown>, file?: string): Promise<Deployment['bytes']> {
  const sizes = new Map<string, number>()
  if (engine === 'sqlite') {
    await sql`pragma wal_checkpoint(truncate)`.execute(db)
    const rows = await sql<{ table: string; bytes: number }>`
      select coalesce(m.tbl_name, d.name) as "table", sum(d.pgsize) as bytes
      from dbstat d left join sqlite_schema m on m.name = d.name group by 1`.execute(db)
    for (const row of rows.rows) sizes.set(row.table, Number(row.bytes))
  } else {
    const rows = await sql<{ table: string; bytes: string }>`
      select relname as "table", pg_total_relation_size(c.oid) as bytes
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'r'`.execute(db)
    for (const row of rows.rows) sizes.set(row.table, Number(row.bytes))
  }
  let transactions = 0
  let messages = 0
  for (const [table, bytes] of sizes) {
    if (table.startsWith('payments_')) transactions += bytes
    if (table.startsWith('avatar_')) messages += bytes
  }
  const total = file ? statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0) : [...sizes.values()].reduce((a, b) => a + b, 0)
  return { transactions, messages, total }
}

async function deploy(engine: DialectName, size: number): Promise<Deployment> {
  const database = await freshDatabase(engine, size)
  const env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' }
  await run('bin/triad.js', ['migrate'], env)
  // Sessions stay active through the run (seeded over the last 10 days); no rate limit on chat.
  const server = await startTriad({ ...env, AVATAR_SESSION_TTL: '30d', AVATAR_RATE_LIMIT: '0', PAYMENTS_RATE_LIMIT: '0' })
  const app = (await post(`${server.url}/apps`, {})) as { app: { key: string } }
  const key = app.app.key
  const merchant = async () =>
    (
      (await post(
        `${server.url}/merchants`,
        { currency: 'EUR', email: 'bench@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true },
        key,
      )) as { merchant: { id: string } }
    ).merchant.id
  const merchantIds: [string, string] = [await merchant(), await merchant()]
  const seeder = await createDb(database.url, { poolSize: 2 })
  const started = performance.now()
  let payments: PaymentsSeed
  let avatar: AvatarSeed
  let bytes: Deployment['bytes']
  try {
    payments = await seedPayments(seeder.db as Kysely<PaymentsTables>, engine, { count: size, merchantIds, probes: PROBES, page: PAGE })
    avatar = await seedAvatar(seeder.db as Kysely<ChatTables>, engine, {
      messages: size,
      sessions: Math.min(10_000, Math.floor(size / 2)),
      probes: Math.min(50, Math.floor(size / 40)) || 1,
      historyLength: HISTORY_LENGTH,
    })
    // What autovacuum would do within a minute of such a load; SQLite is left as Triad leaves it.
    if (engine === 'postgres') await sql`analyze`.execute(seeder.db)
    bytes = await databaseBytes(engine, seeder.db, database.file)
  } finally {
    await seeder.destroy()
  }
  const seedSeconds = (performance.now() - started) / 1000
  console.log(`  ${engine} ${fmtSize(size)}: seeded ${size} transactions and ${size} messages in ${seedSeconds.toFixed(1)} s`)
  return {
    engine,
    size,
    server,
    key,
    merchantId: merchantIds[0],
    payments,
    avatar,
    seedSeconds,
    bytes,
    drop: async () => {
      await server.stop()
      if (!values.keep) await database.drop()
    },
  }
}

interface Route {
  name: string
  load(d: Deployment): { method: 'GET' | 'POST'; paths: string[]; body?: string; auth: boolean }
}

const routes: Route[] = [
  // The control: no database work at all. Whatever its figures move by between sizes is the
  // machine or the process, not the data.
  { name: 'GET /healthz (control: no database work)', load: () => ({ method: 'GET', paths: ['/healthz'], auth: false }) },
  { name: 'GET /transactions/{id}', load: (d) => ({ method: 'GET', paths: d.payments.readProbes.map((id) => `/transactions/${id}`), auth: true }) },
  {
    name: `transactions list, first page (limit ${PAGE})`,
    load: (d) => ({ method: 'GET', paths: [`/merchants/${d.merchantId}/transactions?limit=${PAGE}`], auth: true }),
  },
  {
    name: `transactions list, deep page (before = 1 % from the oldest, at least a full page)`,
    load: (d) => ({ method: 'GET', paths: [`/merchants/${d.merchantId}/transactions?limit=${PAGE}&before=${d.payments.deepCursor}`], auth: true }),
  },
  {
    name: 'capture (POST /transactions/{id}/captures, 1 cent)',
    load: (d) => ({ method: 'POST', paths: d.payments.captureProbes.map((id) => `/transactions/${id}/captures`), body: '{"amount":1}', auth: true }),
  },
  {
    name: `GET /v1/session/{id}/history (${HISTORY_LENGTH} messages)`,
    load: (d) => ({ method: 'GET', paths: d.avatar.historyProbes.map((id) => `/v1/session/${id}/history`), auth: false }),
  },
  { name: `GET /v1/sessions?limit=${PAGE}`, load: () => ({ method: 'GET', paths: [`/v1/sessions?limit=${PAGE}`], auth: false }) },
  {
    name: `GET /v1/sessions?limit=${PAGE}&before= (90 % down)`,
    load: (d) => ({ method: 'GET', paths: [`/v1/sessions?limit=${PAGE}&before=${d.avatar.deepCursor}`], auth: false }),
  },
]

interface Sample {
  requestsPerSecond: number
  p50: number
  p99: number
  cpuUs: number
  bad: number
}

const reported = new Set<string>()

async function drive(d: Deployment, route: Route, seconds = durationSeconds): Promise<Sample> {
  const { method, paths, body, auth } = route.load(d)
  let next = 0
  const before = cpuMicros(d.server.pid)
  const result = await autocannon({
    url: d.server.url,
    connections,
    duration: seconds,
    requests: [
      {
        method,
        headers: { ...(auth ? { authorization: basicAuth(d.key) } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        body,
        setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }),
      },
    ],
  })
  const requests = result.requests.total
  if (result.non2xx > 0 && !reported.has(route.name)) {
    reported.add(route.name)
    const probe = await fetch(d.server.url + paths[0], { method, headers: { ...(auth ? { authorization: basicAuth(d.key) } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }, body })
    console.log(`  ${route.name} at ${fmtSize(d.size)}: ${result.non2xx} answers not 2xx, such as ${probe.status} ${(await probe.text()).slice(0, 300)}`)
  }
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: (cpuMicros(d.server.pid) - before) / Math.max(requests, 1),
    bad: result.errors + result.non2xx,
  }
}

const median = (items: number[]) => [...items].sort((a, b) => a - b)[Math.floor(items.length / 2)] ?? Number.NaN

async function growth(engine: DialectName): Promise<string[]> {
  console.log(`\n${engine}: seeding ${sizes.map(fmtSize).join(', ')}`)
  const deployments: Deployment[] = []
  const lines: string[] = []
  try {
    for (const size of sizes) deployments.push(await deploy(engine, size))
    // A short warm-up of every route on every size (JIT, caches, connection pools), unmeasured.
    const warmUp = Math.max(0.5, durationSeconds / 3)
    for (const d of deployments) for (const route of routes) await drive(d, route, warmUp)
    const samples = new Map<string, Sample[]>()
    const key = (route: Route, d: Deployment) => `${route.name}|${d.size}`
    for (let round = 0; round < rounds; round++) {
      for (const route of routes) {
        // Rotate the order of the sizes from round to round (and route to route).
        const offset = (round + routes.indexOf(route)) % deployments.length
        const order = [...deployments.slice(offset), ...deployments.slice(0, offset)]
        for (const d of order) {
          const sample = await drive(d, route)
          const list = samples.get(key(route, d)) ?? []
          list.push(sample)
          samples.set(key(route, d), list)
        }
      }
    }
    const small = deployments[0]
    const large = deployments.at(-1) ?? small
    console.log(`\n${engine}: ${rounds} rounds × ${durationSeconds} s per size and route, ${connections} connections; sizes alternate within each round`)
    lines.push(`| route | size | req/s (median round) | p50 ms | p99 ms | CPU µs/req | ${fmtSize(large.size)} / ${fmtSize(small.size)} | req/s of each round |`, '|---|---|---|---|---|---|---|---|')
    for (const route of routes) {
      const figures = deployments.map((d) => {
        const list = samples.get(key(route, d)) ?? []
        return {
          size: d.size,
          // The median round: one round caught by a burst of the machine's other load moves a mean.
          rps: median(list.map((s) => s.requestsPerSecond)),
          rounds: list.map((s) => s.requestsPerSecond.toFixed(0)).join(' '),
          p50: median(list.map((s) => s.p50)),
          p99: median(list.map((s) => s.p99)),
          cpu: median(list.map((s) => s.cpuUs)),
          bad: list.reduce((a, s) => a + s.bad, 0),
        }
      })
      const first = figures[0]
      const last = figures.at(-1) ?? first
      const ratio = first.rps / last.rps
      for (const f of figures) {
        const cell = f === last && figures.length > 1 ? `**${ratio.toFixed(2)}×** (CPU ${(last.cpu / first.cpu).toFixed(2)}×)` : ''
        lines.push(
          `| ${f === first ? route.name : ''} | ${fmtSize(f.size)} | ${f.rps.toFixed(0)} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} | ${f.cpu.toFixed(0)} | ${cell}${f.bad ? ` ⚠ ${f.bad} errors/non-2xx` : ''} | ${f.rounds} |`,
        )
      }
      reportRow({
        benchmark: 'growth',
        measure: `${engine}: ${route.name}, cost at ${fmtSize(last.size)} / at ${fmtSize(first.size)} (req/s ratio)`,
        target: '≤ 1.5×',
        figure: `${ratio.toFixed(2)}× (${first.rps.toFixed(0)} → ${last.rps.toFixed(0)} req/s, p50 ${first.p50.toFixed(1)} → ${last.p50.toFixed(1)} ms, p99 ${first.p99.toFixed(1)} → ${last.p99.toFixed(1)} ms)`,
        met: smoke || figures.length < 2 ? null : ratio <= 1.5 && last.bad === 0,
        command,
      })
    }
    lines.push('', `| size | seed s | bytes per transaction (payments tables) | bytes per message (avatar tables) | whole database per row (transactions + messages) |`, '|---|---|---|---|---|')
    for (const d of deployments) {
      lines.push(
        `| ${fmtSize(d.size)} | ${d.seedSeconds.toFixed(1)} | ${(d.bytes.transactions / d.size).toFixed(0)} | ${(d.bytes.messages / d.size).toFixed(0)} | ${(d.bytes.total / (2 * d.size)).toFixed(0)} |`,
      )
      reportRow({
        benchmark: 'growth',
        measure: `${engine}: database bytes per row at ${fmtSize(d.size)} (${engine === 'sqlite' ? 'file size' : 'pg_total_relation_size'})`,
        target: 'figure',
        figure: `${(d.bytes.transactions / d.size).toFixed(0)} B per transaction, ${(d.bytes.messages / d.size).toFixed(0)} B per message; seeded in ${d.seedSeconds.toFixed(0)} s`,
        met: null,
        command,
      })
    }
    for (const line of lines) console.log(line)
  } finally {
    for (const d of deployments) await d.drop()
  }
  return lines
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

/** Opens one more stream: time to the response's first byte (status line) and to its first token event. */
async function oneStream(url: string): Promise<{ firstByteMs: number; firstTokenMs: number }> {
  const payload = JSON.stringify({ userText: 'Tell me a long story' })
  const started = performance.now()
  const request = httpRequest(`${url}/v1/chat/stream`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), accept: 'text/event-stream' },
  })
  request.end(payload)
  const [response] = (await once(request, 'response')) as [IncomingMessage]
  const firstByteMs = performance.now() - started
  if (response.statusCode !== 200) throw new Error(`the stream answered ${response.statusCode}`)
  response.setEncoding('utf8')
  let firstTokenMs = Number.NaN
  for await (const chunk of response as AsyncIterable<string>) {
    if (chunk.includes('"token"')) {
      firstTokenMs = performance.now() - started
      break
    }
  }
  request.destroy()
  return { firstByteMs, firstTokenMs }
}

/** Starts a client process of bench/growth-sse-client.ts holding `count` streams; resolves once they are all open. */
async function holdStreams(url: string, count: number): Promise<{ stop(): Promise<void>; openMs: number }> {
  const child = spawn(process.execPath, [join(root, 'bench/growth-sse-client.ts'), url, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] })
  if (!child.stdout) throw new Error('no stdout')
  for await (const line of createInterface({ input: child.stdout })) {
    const match = /^ready (\d+) (\d+) (\d+)$/.exec(line)
    if (!match) continue
    if (Number(match[1]) !== count) throw new Error(`a client held ${match[1]} of ${count} streams (${match[3]} failed)`)
    return { stop: stopper(child), openMs: Number(match[2]) }
  }
  throw new Error('a stream client exited early')
}

async function idleStreams(): Promise<void> {
  // The mock model sends its first token at once and the next an hour later: every stream sits
  // idle after its first event (heartbeat comments every 15 s, as deployed).
  const server = await startTriad({ TRIAD_SERVICES: 'avatar', AVATAR_MOCK_TOKEN_DELAY: '1h', AVATAR_RATE_LIMIT: '0' })
  const clients: { stop(): Promise<void>; openMs: number }[] = []
  try {
    const probe = async (n: number) => {
      const samples: { firstByteMs: number; firstTokenMs: number }[] = []
      for (let i = 0; i < n; i++) samples.push(await oneStream(server.url))
      return samples
    }
    await probe(20)
    const before = await probe(10)
    const idleRss = rssMb(server.pid)
    const perClient = 5000
    const started = performance.now()
    for (let remaining = streamCount; remaining > 0; remaining -= perClient) clients.push(await holdStreams(server.url, Math.min(perClient, remaining)))
    const openSeconds = (performance.now() - started) / 1000
    await sleep(2000)
    let rss = 0
    for (let i = 0; i < 5; i++) {
      rss = Math.max(rss, rssMb(server.pid))
      await sleep(400)
    }
    const after = await probe(10)
    const med = (items: number[]) => median(items)
    const line = (label: string, samples: { firstByteMs: number; firstTokenMs: number }[]) =>
      `${label}: first byte ${samples[0].firstByteMs.toFixed(1)} ms (next ${samples.length - 1}: median ${med(samples.slice(1).map((s) => s.firstByteMs)).toFixed(1)}, max ${Math.max(...samples.slice(1).map((s) => s.firstByteMs)).toFixed(1)}), first token ${samples[0].firstTokenMs.toFixed(1)} ms (median ${med(samples.map((s) => s.firstTokenMs)).toFixed(1)})`
    console.log(`\nIdle SSE streams (POST /v1/chat/stream, mock paced 1 h per token; ${clients.length} client processes)`)
    console.log(`  ${streamCount} streams open in ${openSeconds.toFixed(1)} s; Triad RSS ${idleRss.toFixed(0)} MB before, ${rss.toFixed(0)} MB with them open (${(((rss - idleRss) * 1024) / streamCount).toFixed(1)} kB per stream)`)
    console.log(`  ${line('with none open', before)}`)
    console.log(`  ${line(`stream ${streamCount + 1} and the next 9`, after)}`)
    reportRow({ benchmark: 'growth', measure: `RSS of Triad with ${streamCount} idle SSE streams open`, target: 'figure', figure: `${rss.toFixed(0)} MB (${idleRss.toFixed(0)} MB before)`, met: null, command })
    reportRow({
      benchmark: 'growth',
      measure: `time to first byte of SSE stream ${streamCount + 1} (and the next 9: median)`,
      target: 'figure',
      figure: `${after[0].firstByteMs.toFixed(1)} ms (${med(after.slice(1).map((s) => s.firstByteMs)).toFixed(1)} ms; with none open ${med(before.map((s) => s.firstByteMs)).toFixed(1)} ms)`,
      met: null,
      command,
    })
  } finally {
    for (const client of clients) await client.stop()
    await server.stop()
  }
}

if (parts.has('growth')) for (const engine of engines) await growth(engine)
if (parts.has('sse')) await idleStreams()
