// Reads on a standby (docs/scaling.md, "Reads on a standby"): what routing a read costs, and what
// it takes off the primary, same run, on a PostgreSQL primary and streaming standby started for
// it (test/helpers/postgres-standby.ts) and two `triad serve` processes over them:
//   baseline  without DATABASE_READ_URL: every read on the primary
//   routed    with DATABASE_READ_URL: lag-tolerant reads on the standby once it has caught up
// Two routes: the dashboard's 90-day volume of a merchant with many transactions (an aggregate:
// the work routing is for) and a 20-row transaction page (a light read). Measured in alternating
// rounds: requests per second, latency, and the CPU per request of each PostgreSQL server (the
// postmaster and all its processes, from /proc). Printed as routed ÷ baseline ratios.
// Usage: node bench/standby-reads.ts [--smoke] [--duration 5] [--connections 8] [--rounds 2] [--transactions 20000]
import autocannon from 'autocannon'
import { readdirSync, readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import { createDb } from '../src/core/db/create-db.ts'
import { startStandbyPair } from '../test/helpers/postgres-standby.ts'
import { basicAuth, cpuMicros, reportRow, seedAuthorizations, startTriad } from './lib.ts'

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    transactions: { type: 'string', default: '20000' },
  },
})
const smoke = values.smoke === true
const durationSeconds = smoke ? 1 : Number(values.duration)
const connections = Number(values.connections)
const rounds = smoke ? 1 : Number(values.rounds)
const transactionCount = smoke ? 2000 : Number(values.transactions)
const command = `node bench/standby-reads.ts${smoke ? ' --smoke' : ` --duration ${durationSeconds} --connections ${connections} --rounds ${rounds} --transactions ${transactionCount}`}`
const METRICS_TOKEN = 'standby-reads-bench-token'

/** CPU (µs) so far of a PostgreSQL server: its postmaster and every process it started. */
function serverCpu(dataDirectory: string): number {
  const postmaster = Number(readFileSync(`${dataDirectory}/postmaster.pid`, 'utf8').split('\n')[0])
  let total = cpuMicros(postmaster)
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const parent = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1])
      if (parent === postmaster) total += cpuMicros(Number(entry))
    } catch {}
  }
  return total
}

interface Figures {
  perSecond: number
  p50Ms: number
  p99Ms: number
  primaryCpuUs: number
  standbyCpuUs: number
  failed: number
}

const cleanups: Array<() => Promise<void> | void> = []
const cleanup = { after: (fn: () => Promise<void> | void) => void cleanups.unshift(fn) }

async function main(): Promise<void> {
  const pair = await startStandbyPair(cleanup)
  const baseline = await startTriad({ DATABASE_URL: pair.primaryUrl, PAYMENTS_RATE_LIMIT: '0' })
  cleanups.unshift(() => baseline.stop())
  const routed = await startTriad({ DATABASE_URL: pair.primaryUrl, DATABASE_READ_URL: pair.standbyUrl, PAYMENTS_RATE_LIMIT: '0', METRICS_TOKEN })
  cleanups.unshift(() => routed.stop())

  // A merchant through the API, one authorization recorded as the module does, then copied
  // (spread over 90 days) into `transactionCount` rows.
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> => {
    const response = await fetch(`${baseline.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    return (await response.json()) as Record<string, unknown>
  }
  const app = (await post('/apps', {})).app as { key: string }
  const merchant = (await post('/merchants', { currency: 'EUR', email: 'b@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true }, { authorization: basicAuth(app.key) }))
    .merchant as { id: string }
  const database = await createDb(pair.primaryUrl, { poolSize: 1 })
  cleanups.unshift(() => database.destroy())
  const [seed] = await seedAuthorizations(database.db, 'postgres', merchant.id, 1, { amount: 1250 })
  const columns = (
    await sql<{ name: string }>`select column_name as name from information_schema.columns where table_name = 'payments_transactions' and table_schema = current_schema() order by ordinal_position`.execute(database.db)
  ).rows.map((row) => row.name)
  const copied = columns.map((name) => {
    if (name === 'id') return sql`id || '_' || lpad(g::text, 7, '0')`
    if (name === 'created') return sql`to_char((created::timestamptz - make_interval(days => g % 90)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    return sql.ref(name)
  })
  await sql`insert into payments_transactions (${sql.join(columns.map((name) => sql.ref(name)))})
    select ${sql.join(copied)} from payments_transactions, generate_series(2, ${transactionCount}) g where id = ${seed}`.execute(database.db)
  await sql`analyze payments_transactions`.execute(database.db)
  await pair.caughtUp()
  console.log(`primary + standby, a merchant with ${transactionCount} transactions over 90 days`)

  const today = new Date().toISOString().slice(0, 10)
  const from = new Date(Date.now() - 89 * 86_400_000).toISOString().slice(0, 10)
  const routes = [
    { name: 'GET /merchants/{id}/volume (90 days)', path: `/merchants/${merchant.id}/volume?from=${from}&to=${today}` },
    { name: 'GET /merchants/{id}/transactions (20)', path: `/merchants/${merchant.id}/transactions?limit=20` },
  ]
  const drive = async (url: string, path: string): Promise<Figures> => {
    const primaryBefore = serverCpu(pair.directories.primary)
    const standbyBefore = serverCpu(pair.directories.standby)
    const result = await autocannon({ url: url + path, connections, duration: durationSeconds, headers: { authorization: basicAuth(app.key) } })
    const requests = Math.max(result.requests.total, 1)
    return {
      perSecond: result.requests.total / durationSeconds,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      primaryCpuUs: (serverCpu(pair.directories.primary) - primaryBefore) / requests,
      standbyCpuUs: (serverCpu(pair.directories.standby) - standbyBefore) / requests,
      failed: result.errors + result.non2xx,
    }
  }
  const mean = (items: Figures[]): Figures => {
    const of = (pick: (item: Figures) => number) => items.reduce((total, item) => total + pick(item), 0) / items.length
    return {
      perSecond: of((item) => item.perSecond),
      p50Ms: of((item) => item.p50Ms),
      p99Ms: of((item) => item.p99Ms),
      primaryCpuUs: of((item) => item.primaryCpuUs),
      standbyCpuUs: of((item) => item.standbyCpuUs),
      failed: of((item) => item.failed) * items.length,
    }
  }
  const row = (label: string, figures: Figures) =>
    `  ${label.padEnd(9)} ${figures.perSecond.toFixed(0).padStart(6)} req/s  p50 ${figures.p50Ms.toFixed(1).padStart(6)} ms  p99 ${figures.p99Ms.toFixed(1).padStart(6)} ms  primary ${figures.primaryCpuUs.toFixed(0).padStart(6)} µs/req  standby ${figures.standbyCpuUs.toFixed(0).padStart(6)} µs/req  failed ${figures.failed}`

  for (const route of routes) {
    const baselines: Figures[] = []
    const subjects: Figures[] = []
    for (let round = 0; round < rounds; round++) {
      baselines.push(await drive(baseline.url, route.path))
      subjects.push(await drive(routed.url, route.path))
    }
    const b = mean(baselines)
    const s = mean(subjects)
    const ratio = (of: (figures: Figures) => number) => (of(s) / Math.max(of(b), 1e-9)).toFixed(2)
    console.log(`\n${route.name}, ${connections} connections, ${rounds} × ${durationSeconds} s each`)
    console.log(row('baseline', b))
    console.log(row('routed', s))
    console.log(`  routed ÷ baseline: req/s ${ratio((f) => f.perSecond)}, p50 ${ratio((f) => f.p50Ms)}, primary CPU per request ${ratio((f) => f.primaryCpuUs)}`)
    const cpu = `${ratio((f) => f.primaryCpuUs)} (${s.primaryCpuUs.toFixed(0)} vs ${b.primaryCpuUs.toFixed(0)} µs/req; the standby's ${s.standbyCpuUs.toFixed(0)} µs/req)`
    const latency = `${ratio((f) => f.p50Ms)} (p50 ${s.p50Ms.toFixed(1)} vs ${b.p50Ms.toFixed(1)} ms; ${s.perSecond.toFixed(0)} vs ${b.perSecond.toFixed(0)} req/s, one machine)`
    reportRow({ benchmark: 'standby-reads', measure: `${route.name} with a standby: primary CPU per request, routed ÷ baseline`, target: '—', figure: cpu, met: null, command })
    reportRow({ benchmark: 'standby-reads', measure: `${route.name} with a standby: latency, routed ÷ baseline`, target: '—', figure: latency, met: null, command })
  }

  const metrics = await (await fetch(`${routed.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  console.log(`\nwhere the routed instance's reads ran:\n${[...metrics.matchAll(/^triad_db_routed_reads_total(\{.*\} \d+)$/gm)].map((match) => `  ${match[1]}`).join('\n')}`)
}

try {
  await main()
} finally {
  for (const fn of cleanups) await fn()
}
