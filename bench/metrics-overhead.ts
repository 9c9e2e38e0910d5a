// What Prometheus metrics cost: the same routes on two `triad serve` processes, one with metrics
// off and one with them on (METRICS_PORT, scraped once per round as Prometheus would), measured in
// alternating rounds in one run. Target: each route keeps ≥ 95 % of its requests per second.
// Usage: node bench/metrics-overhead.ts [--rounds 3 --duration 5] [--smoke]
import autocannon from 'autocannon'
import type { Kysely } from 'kysely'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { systemClock } from '../src/core/clock.ts'
import { createDb } from '../src/core/db/create-db.ts'
import { createIdGenerator } from '../src/core/ids.ts'
import { cardExpiry, recordTransaction } from '../src/services/payments/modules/transactions/index.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { createEventRecorder } from '../src/services/payments/modules/webhooks/index.ts'
import { basicAuth, cpuMicros, freePort, type Measurement, reportRow, type RunningServer, startTriad, toMeasurement } from './lib.ts'

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, smoke: { type: 'boolean', default: false } },
})
const rounds = values.smoke ? 1 : Number(values.rounds)
const durationSeconds = values.smoke ? 1 : Number(values.duration)
const connections = 20
const TARGET = 0.95
const command = `node bench/metrics-overhead.ts${values.smoke ? ' --smoke' : ` --rounds ${rounds} --duration ${durationSeconds}`}`

interface Instance {
  server: RunningServer
  sqliteUrl: string
  key: string
  transactionIds: string[]
  metricsUrl?: string
}

async function startInstance(metrics: boolean): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), 'triad-bench-metrics-'))
  const sqliteUrl = `sqlite:${join(dir, 'triad.sqlite')}`
  const metricsPort = metrics ? await freePort() : undefined
  const server = await startTriad({
    DATABASE_URL: sqliteUrl,
    TRIAD_SECRETS_FILE: join(dir, 'secrets.json'),
    AVATAR_RATE_LIMIT: '0',
    AVATAR_MOCK_TOKEN_DELAY: '0ms',
    ...(metricsPort === undefined ? {} : { METRICS_PORT: String(metricsPort) }),
  })
  const created = await fetch(`${server.url}/apps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"bench"}' })
  const key = ((await created.json()) as { app: { key: string } }).app.key
  const merchantResponse = await fetch(`${server.url}/merchants`, {
    method: 'POST',
    headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', currency: 'EUR', email: 'bench@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true }),
  })
  const merchant = ((await merchantResponse.json()) as { merchant: { id: string } }).merchant
  const seed = await createDb(sqliteUrl)
  const ids = createIdGenerator(systemClock)
  const transactionIds: string[] = []
  try {
    for (let index = 0; index < 200; index++) {
      const row = await recordTransaction(
        { db: seed.db as Kysely<PaymentsTables>, database: { dialect: 'sqlite' }, ids, clock: systemClock, events: createEventRecorder({ ids, clock: systemClock }) },
        {
          merchant: { id: merchant.id, test: 1, descriptor: 'BENCH' },
          amount: 1_000_000_000,
          currency: 'EUR',
          card: { ref: null, bin: '410000', last4: '0000', expiry: cardExpiry(2030, 8), scheme: 'visa', codePresent: true },
          recurring: false,
        },
      )
      transactionIds.push(row.id)
    }
  } finally {
    await seed.destroy()
  }
  return { server, sqliteUrl, key, transactionIds, ...(metricsPort === undefined ? {} : { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` }) }
}

interface Route {
  name: string
  load(instance: Instance): autocannon.Request
}

const routes: Route[] = [
  { name: 'GET /healthz', load: () => ({ method: 'GET', path: '/healthz' }) },
  { name: 'authn GET /api/authn/status', load: () => ({ method: 'GET', path: '/api/authn/status' }) },
  {
    name: 'avatar POST /v1/chat (mock)',
    load: () => ({ method: 'POST', path: '/v1/chat', headers: { 'content-type': 'application/json' }, body: '{"userText":"Hello, how are you today?"}' }),
  },
  {
    name: 'payments POST /transactions/{id}/captures',
    load: (instance) => {
      let next = 0
      return {
        method: 'POST',
        headers: { authorization: basicAuth(instance.key), 'content-type': 'application/json' },
        body: '{"amount":1}',
        setupRequest: (request) => ({ ...request, path: `/transactions/${instance.transactionIds[next++ % instance.transactionIds.length]}/captures` }),
      }
    },
  },
]

async function run(instance: Instance, route: Route): Promise<Measurement & { cpuUs: number }> {
  const before = cpuMicros(instance.server.pid)
  const result = toMeasurement(await autocannon({ url: instance.server.url, connections, duration: durationSeconds, requests: [route.load(instance)] }))
  const requests = Math.max(result.requestsPerSecond * durationSeconds, 1)
  const cpuUs = (cpuMicros(instance.server.pid) - before) / requests
  // Prometheus scrapes every 15-60 s: once per round stands for it (and checks the endpoint answers).
  if (instance.metricsUrl) {
    const scrape = await fetch(instance.metricsUrl)
    if (!scrape.ok) throw new Error(`scrape failed: ${scrape.status}`)
    await scrape.text()
  }
  return { ...result, cpuUs }
}

const median = (items: number[]) => {
  const sorted = [...items].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

const off = await startInstance(false)
let on: Instance | undefined
try {
  on = await startInstance(true)
  console.log(`Metrics overhead: metrics off vs on (METRICS_PORT), ${rounds} round(s) × ${durationSeconds} s per route and side, ${connections} connections, SQLite`)
  for (const route of routes) {
    const offRuns: Array<Measurement & { cpuUs: number }> = []
    const onRuns: Array<Measurement & { cpuUs: number }> = []
    for (let round = 0; round < rounds; round++) {
      // Alternating which side goes first, so drift on the shared machine falls on both.
      if (round % 2 === 0) {
        offRuns.push(await run(off, route))
        onRuns.push(await run(on, route))
      } else {
        onRuns.push(await run(on, route))
        offRuns.push(await run(off, route))
      }
    }
    const offRps = offRuns.reduce((total, item) => total + item.requestsPerSecond, 0) / offRuns.length
    const onRps = onRuns.reduce((total, item) => total + item.requestsPerSecond, 0) / onRuns.length
    const offCpu = median(offRuns.map((item) => item.cpuUs))
    const onCpu = median(onRuns.map((item) => item.cpuUs))
    const ratio = onRps / offRps
    const failures = [...offRuns, ...onRuns].reduce((total, item) => total + item.errors + item.non2xx, 0)
    console.log(
      `  ${route.name.padEnd(44)} off ${offRps.toFixed(0).padStart(6)} req/s ${offCpu.toFixed(0).padStart(5)} µs CPU   on ${onRps.toFixed(0).padStart(6)} req/s ${onCpu.toFixed(0).padStart(5)} µs CPU   ratio ${ratio.toFixed(3)}   CPU ${((onCpu / offCpu - 1) * 100).toFixed(1)} %${failures ? `   FAILURES ${failures}` : ''}`,
    )
    reportRow({
      benchmark: 'metrics-overhead',
      measure: `${route.name}: req/s with metrics on ÷ off (server CPU per request on vs off)`,
      target: `≥ ${TARGET}`,
      figure: `${ratio.toFixed(3)} (CPU ${offCpu.toFixed(0)} → ${onCpu.toFixed(0)} µs/request, ${((onCpu / offCpu - 1) * 100).toFixed(1)} %)`,
      met: values.smoke || failures > 0 ? null : ratio >= TARGET,
      command,
    })
  }
} finally {
  await off.server.stop()
  await on?.server.stop()
}
