// What Prometheus metrics cost: the same routes on two `triad serve` processes, one with metrics
// off and one with them on (METRICS_PORT, scraped once per round as Prometheus would), measured in
// alternating rounds in one run. Target: each route keeps ≥ 95 % of its requests per second.
// The figure is the median of the rounds' own ratios (each round runs off and on back to back),
// so a burst of other work on the shared machine spoils one round's ratio, not the whole figure.
// With --profile both processes run under --cpu-prof (the same cost on both sides), and the
// share of the metrics-on process's busy CPU spent in metrics code (prom-client, src/core/metrics,
// the services' recorders) is reported per route: a figure the other load on a shared machine
// hardly moves, unlike requests per second.
// Usage: node bench/metrics-overhead.ts [--rounds 8 --duration 2] [--profile] [--smoke]
import autocannon from 'autocannon'
import type { Kysely } from 'kysely'
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDb } from '../src/core/db/create-db.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { basicAuth, cpuMicros, freePort, type Measurement, monotonicUs, type ProfileSelfTime, profileSelfTimes, reportRow, type RunningServer, seedAuthorizations, startTriad, toMeasurement } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    duration: { type: 'string', default: '2' },
    profile: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
  },
})
const rounds = values.smoke ? 1 : Number(values.rounds)
const durationSeconds = values.smoke ? 1 : Number(values.duration)
const connections = 20
const TARGET = 0.95
const command = `node bench/metrics-overhead.ts${values.smoke ? ' --smoke' : ` --rounds ${rounds} --duration ${durationSeconds}${values.profile ? ' --profile' : ''}`}`

interface Instance {
  server: RunningServer
  sqliteUrl: string
  key: string
  transactionIds: string[]
  metricsUrl?: string
  /** Where its --cpu-prof profile is written when it stops (with --profile). */
  profileDir: string
}

async function startInstance(metrics: boolean): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), 'triad-bench-metrics-'))
  const profileDir = join(dir, 'profile')
  const sqliteUrl = `sqlite:${join(dir, 'triad.sqlite')}`
  const metricsPort = metrics ? await freePort() : undefined
  const server = await startTriad({
    DATABASE_URL: sqliteUrl,
    TRIAD_SECRETS_FILE: join(dir, 'secrets.json'),
    AVATAR_RATE_LIMIT: '0',
    PAYMENTS_RATE_LIMIT: '0',
    AVATAR_MOCK_TOKEN_DELAY: '0ms',
    ...(values.profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
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
  const transactionIds = await seedAuthorizations(seed.db as Kysely<PaymentsTables>, 'sqlite', merchant.id, 200).finally(() => seed.destroy())
  return { server, sqliteUrl, key, transactionIds, profileDir, ...(metricsPort === undefined ? {} : { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` }) }
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

/** Per process and route, when it was under the route's load (CLOCK_MONOTONIC µs). */
const loadWindows = new Map<string, Array<[number, number]>>()
const windowsOf = (instance: Instance, route: Route) => loadWindows.get(`${instance.profileDir} ${route.name}`) ?? []

async function run(instance: Instance, route: Route): Promise<Measurement & { cpuUs: number }> {
  const before = cpuMicros(instance.server.pid)
  const startedUs = monotonicUs()
  const result = toMeasurement(await autocannon({ url: instance.server.url, connections, duration: durationSeconds, requests: [route.load(instance)] }))
  loadWindows.set(`${instance.profileDir} ${route.name}`, [...windowsOf(instance, route), [startedUs, monotonicUs()]])
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
    const roundRatios = onRuns.map((item, index) => item.requestsPerSecond / Math.max(offRuns[index]?.requestsPerSecond ?? 0, 1))
    const ratio = median(roundRatios)
    const spread = `rounds ${Math.min(...roundRatios).toFixed(2)}–${Math.max(...roundRatios).toFixed(2)}`
    const failures = [...offRuns, ...onRuns].reduce((total, item) => total + item.errors + item.non2xx, 0)
    console.log(
      `  ${route.name.padEnd(44)} off ${offRps.toFixed(0).padStart(6)} req/s ${offCpu.toFixed(0).padStart(5)} µs CPU   on ${onRps.toFixed(0).padStart(6)} req/s ${onCpu.toFixed(0).padStart(5)} µs CPU   ratio ${ratio.toFixed(3)} (${spread})   CPU ${((onCpu / offCpu - 1) * 100).toFixed(1)} %${failures ? `   FAILURES ${failures}` : ''}`,
    )
    reportRow({
      benchmark: 'metrics-overhead',
      measure: `${route.name}: req/s with metrics on ÷ off, median of back-to-back rounds (server CPU per request on vs off)`,
      target: `≥ ${TARGET}`,
      figure: `${ratio.toFixed(3)} median of ${roundRatios.length} rounds (${spread}; CPU ${offCpu.toFixed(0)} → ${onCpu.toFixed(0)} µs/request, ${((onCpu / offCpu - 1) * 100).toFixed(1)} %)`,
      met: values.smoke || failures > 0 ? null : ratio >= TARGET,
      command,
    })
  }
} finally {
  await off.server.stop()
  await on?.server.stop()
}

/** Whether a profiled function is metrics code: prom-client, the core's metrics, or a service's recorder. */
const isMetricsCode = (url: string) => url.includes('/node_modules/prom-client/') || url.includes('/src/core/metrics/') || /\/src\/services\/[^/]+\/metrics\.ts$/.test(url)

if (values.profile && on && !values.smoke) {
  // The launcher execs the server in the same process: its own short profile has no sample in the windows.
  console.log('  Share of the metrics-on process\'s busy CPU in metrics code, under each route\'s load (from --cpu-prof):')
  /** A process's busy µs under the route's load, by function. */
  const selfTimes = (instance: Instance, route: Route) => {
    const files = readdirSync(instance.profileDir).filter((name) => name.endsWith('.cpuprofile'))
    const parts = files.map((file) => profileSelfTimes(join(instance.profileDir, file), windowsOf(instance, route)))
    return { busy: parts.reduce((total, part) => total + part.busyUs, 0), functions: parts.flatMap((part) => part.functions) }
  }
  /** The share (%) of `busy` spent in the functions `pick` selects. */
  const shareOf = ({ busy, functions }: ReturnType<typeof selfTimes>, pick: (item: ProfileSelfTime) => boolean) =>
    busy === 0 ? 0 : (100 * functions.filter(pick).reduce((total, item) => total + item.us, 0)) / busy
  const isGc = (item: ProfileSelfTime) => item.functionName === '(garbage collector)'
  for (const route of routes) {
    const onTimes = selfTimes(on, route)
    const busy = onTimes.busy
    const share = shareOf(onTimes, (item) => isMetricsCode(item.url))
    const gcOn = shareOf(onTimes, isGc)
    const gcOff = shareOf(selfTimes(off, route), isGc)
    console.log(`    ${route.name.padEnd(44)} ${share.toFixed(1)} % of ${(busy / 1e6).toFixed(1)} s   (garbage collector: ${gcOff.toFixed(1)} % off, ${gcOn.toFixed(1)} % on)`)
    reportRow({
      benchmark: 'metrics-overhead',
      measure: `${route.name}: share of the metrics-on process's CPU spent in metrics code (prom-client, core/metrics, recorders), profiled`,
      target: '≤ 5 %',
      figure: `${share.toFixed(1)} % of ${(busy / 1e6).toFixed(1)} s busy (garbage collector ${gcOff.toFixed(1)} % off, ${gcOn.toFixed(1)} % on)`,
      met: busy > 0 && share <= 5,
      command,
    })
  }
}
