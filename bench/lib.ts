import autocannon from 'autocannon'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, openSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Kysely } from 'kysely'
import { systemClock } from '../src/core/clock.ts'
import type { DialectName } from '../src/core/db/create-db.ts'
import { createIdGenerator } from '../src/core/ids.ts'
import { cardExpiry, recordTransaction } from '../src/services/payments/modules/transactions/index.ts'
import { createEventRecorder } from '../src/services/payments/modules/webhooks/index.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { freePort } from '../test/helpers/free-port.ts'

/** One result of a benchmark, as `npm run bench` (bench/run.ts) collects them into its table. */
export interface BenchRow {
  benchmark: string
  measure: string
  target: string
  figure: string
  met: boolean | null
  command: string
}

export function reportRow(row: BenchRow): void {
  console.log(`@bench-row ${JSON.stringify(row)}`)
}

/** Whether the benchmark runs as a smoke test (`--smoke`: a few seconds, no targets asserted). */
export const smoke = process.argv.includes('--smoke')

/** A target's verdict: null in smoke mode (the figures of a few seconds prove nothing). */
export const verdict = (met: boolean): boolean | null => (smoke ? null : met)

export interface RunningServer {
  url: string
  pid: number
  stop(): Promise<void>
}

/** CPU time (user + system) a process has used so far, in microseconds (Linux /proc, 100 Hz ticks). */
export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/**
 * Like measure, plus the server's CPU time per request: other load on a shared machine moves
 * req/s a lot and CPU per request little, so it says what the ratio would be on an idle machine.
 */
export async function measureWithCpu(server: RunningServer, options: LoadOptions = {}): Promise<Measurement & { cpuPerRequestUs: number }> {
  const before = cpuMicros(server.pid)
  const result = await measure(server.url, options)
  const requests = result.requestsPerSecond * (options.durationSeconds ?? 5)
  return { ...result, cpuPerRequestUs: (cpuMicros(server.pid) - before) / Math.max(requests, 1) }
}

export interface Measurement {
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  errors: number
  non2xx: number
}

const root = new URL('..', import.meta.url).pathname

async function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  if (!child.stdout) throw new Error('child has no stdout')
  const lines = createInterface({ input: child.stdout })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  try {
    for await (const line of lines) {
      const match = pattern.exec(line)
      if (match) return match[1] ?? match[0]
    }
  } finally {
    clearTimeout(timer)
  }
  throw new Error(`server exited before printing ${pattern}`)
}

/** Stops a child server with SIGTERM and waits for it to exit. */
export function stopper(child: ChildProcess) {
  return async () => {
    if (child.exitCode !== null) return
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
}

/** Starts the bare Fastify baseline (or another server of bench/servers) in its own process. */
export async function startBaseline(server = 'baseline.ts', env: Record<string, string> = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [join(root, 'bench/servers', server)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  const url = await waitForLine(child, /^(http:\/\/\S+)$/)
  return { url, pid: child.pid ?? 0, stop: stopper(child) }
}

async function waitUntilHealthy(url: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`triad exited with code ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/readyz`)).ok) return
    } catch {}
    await sleep(100)
  }
  child.kill('SIGKILL')
  throw new Error('triad did not become healthy')
}

/**
 * Starts `triad serve` in its own process on a free port, with a fresh SQLite file unless
 * `env` says otherwise, at the production log level (info), logging to a file as a deployed
 * server would (a pipe drained by this process would steal the load generator's CPU).
 */
export async function startTriad(env: Record<string, string> = {}): Promise<RunningServer & { logFile: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'triad-bench-'))
  const logFile = join(dataDir, 'triad.log')
  const port = await freePort()
  const child = spawn(process.execPath, [join(root, 'bin/triad.js'), 'serve', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: `sqlite:${join(dataDir, 'triad.sqlite')}`, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', openSync(logFile, 'a'), 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  await waitUntilHealthy(url, child)
  return { url, pid: child.pid ?? 0, logFile, stop: stopper(child) }
}

export interface LoadOptions {
  path?: string
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE'
  headers?: Record<string, string>
  body?: string
  connections?: number
  durationSeconds?: number
}

/** Drives `url` with autocannon for a bounded time and returns its figures. */
export async function measure(baseUrl: string, options: LoadOptions = {}): Promise<Measurement> {
  const result = await autocannon({
    url: baseUrl + (options.path ?? '/'),
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? 20,
    duration: options.durationSeconds ?? 5,
  })
  return toMeasurement(result)
}

/** The figures of an autocannon run that the benchmarks report. */
export function toMeasurement(result: autocannon.Result): Measurement {
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

/** HTTP Basic credentials as the payments API takes them: empty user, the key as password. */
export const basicAuth = (key: string) => `Basic ${Buffer.from(`:${key}`).toString('base64')}`

/**
 * Measures the baseline and the subject in alternating rounds (the machine is shared and
 * noisy, so a single pair can mislead) and reports the mean of each and their ratio.
 */
export async function compare(
  rounds: number,
  baseline: () => Promise<Measurement>,
  subject: () => Promise<Measurement>,
): Promise<{ baseline: Measurement; subject: Measurement; ratio: number }> {
  const baselines: Measurement[] = []
  const subjects: Measurement[] = []
  for (let round = 0; round < rounds; round++) {
    baselines.push(await baseline())
    subjects.push(await subject())
  }
  const mean = (items: Measurement[]): Measurement => ({
    requestsPerSecond: avg(items.map((item) => item.requestsPerSecond)),
    latencyP50Ms: avg(items.map((item) => item.latencyP50Ms)),
    latencyP99Ms: avg(items.map((item) => item.latencyP99Ms)),
    errors: sum(items.map((item) => item.errors)),
    non2xx: sum(items.map((item) => item.non2xx)),
  })
  const b = mean(baselines)
  const s = mean(subjects)
  return { baseline: b, subject: s, ratio: s.requestsPerSecond / b.requestsPerSecond }
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
const avg = (values: number[]) => sum(values) / Math.max(values.length, 1)

export function printComparison(name: string, result: { baseline: Measurement; subject: Measurement; ratio: number }, target?: number): void {
  const row = (label: string, m: Measurement) =>
    `  ${label.padEnd(10)} ${m.requestsPerSecond.toFixed(0).padStart(8)} req/s   p50 ${m.latencyP50Ms.toFixed(1)} ms   p99 ${m.latencyP99Ms.toFixed(1)} ms   errors ${m.errors}   non-2xx ${m.non2xx}`
  console.log(name)
  console.log(row('baseline', result.baseline))
  console.log(row('triad', result.subject))
  const verdict = target === undefined ? '' : result.ratio >= target ? `  (target ≥ ${target}: met)` : `  (target ≥ ${target}: NOT met)`
  console.log(`  ratio      ${result.ratio.toFixed(2)}${verdict}`)
}

/**
 * The ceiling of a POST benchmark: bare Fastify answering `POST /` with `body` (parsed and
 * validated, no work; bench/servers/baseline-post.ts) against the baseline's `GET /`, same
 * run. A Triad route that does real work cannot be expected above this ratio.
 */
export async function printPostCeiling(baselineUrl: string, body: string, options: { durationSeconds: number; connections?: number }): Promise<void> {
  const load = { durationSeconds: options.durationSeconds, connections: options.connections ?? 20 }
  const post = await startBaseline('baseline-post.ts')
  try {
    const result = await compare(
      1,
      () => measure(baselineUrl, { path: '/', ...load }),
      () => measure(post.url, { path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body, ...load }),
    )
    printComparison(`  (reference) bare Fastify POST of a ${Buffer.byteLength(body)}-byte JSON body, no work, vs bare Fastify GET: the ceiling`, result)
  } finally {
    await post.stop()
  }
}

export { freePort }

const seedIds = createIdGenerator(systemClock)

/**
 * Authorizations written straight into a payments database the way the transactions module
 * records them (faster than the checkout flow, and what a capture benchmark needs): `amount`
 * minor units each (by default 10 000 000.00 EUR, room for many 1-cent captures), on a test
 * merchant.
 */
export async function seedAuthorizations(
  db: Kysely<PaymentsTables>,
  dialect: DialectName,
  merchantId: string,
  count: number,
  options: { amount?: number; tds?: 'full' } = {},
): Promise<string[]> {
  const made: string[] = []
  for (let index = 0; index < count; index++) {
    const row = await recordTransaction(
      { db, database: { dialect }, ids: seedIds, clock: systemClock, events: createEventRecorder({ ids: seedIds, clock: systemClock, dialect }) },
      {
        merchant: { id: merchantId, test: 1, descriptor: 'BENCH' },
        amount: options.amount ?? 1_000_000_000,
        currency: 'EUR',
        card: { ref: null, bin: '410000', last4: '0000', expiry: cardExpiry(2030, 8), scheme: 'visa', codePresent: true },
        ...(options.tds ? { tds: options.tds } : {}),
        recurring: false,
      },
    )
    made.push(row.id)
  }
  return made
}

interface CpuProfileFile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** One function's busy time in a profile. */
export interface ProfileSelfTime {
  functionName: string
  url: string
  lineNumber: number
  us: number
}

/**
 * Self time per function of a V8 .cpuprofile within `windows` (CLOCK_MONOTONIC µs, as
 * process.hrtime: the measured rounds, not start-up), idle left out. `busyUs` is their sum.
 */
export function profileSelfTimes(path: string, windows: Array<[number, number]>): { busyUs: number; functions: ProfileSelfTime[] } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfileFile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  let busyUs = 0
  let at = profile.startTime
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0
    at += delta
    const node = byId.get(id)
    // Time spent waiting for work is not cost.
    if (!node || node.callFrame.functionName === '(idle)' || !windows.some(([from, to]) => at >= from && at < to)) return
    busyUs += delta
    self.set(id, (self.get(id) ?? 0) + delta)
  })
  const functions = [...self.entries()].map(([id, us]) => ({ ...(byId.get(id)?.callFrame ?? { functionName: '', url: '', lineNumber: 0 }), us }))
  return { busyUs, functions }
}

export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)
