// authn benchmarks: GET /api/authn/status with a valid token against a bare Fastify
// hello-world (same run, alternating rounds), with and without the revocation cache, and
// password logins per second with the argon2id parameters in src/core/security/password.ts.
// The machine is shared and noisy, so besides the mean of all rounds it prints the median of
// the per-round ratios (each round is one baseline run followed at once by one Triad run).
// Usage: node bench/authn.ts [--rounds 5 --duration 5]
import { parseArgs } from 'node:util'
import { compare, type Measurement, measure, measureWithCpu, printComparison, reportRow, type RunningServer, smoke, startBaseline, startTriad } from './lib.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '5' }, smoke: { type: 'boolean', default: false } } })
const rounds = smoke ? 1 : Number(values.rounds)
const durationSeconds = smoke ? 1 : Number(values.duration)

const EMAIL = 'bench-admin@example.org'
const PASSWORD = 'bench password 123'
const CSRF = 'bench-csrf-token'
const env = { TRIAD_SERVICES: 'authn', AUTHN_ADMIN_EMAIL: EMAIL, AUTHN_ADMIN_PASSWORD: PASSWORD }
const loginRequest = {
  method: 'POST' as const,
  headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `DSPACE-XSRF-COOKIE=${CSRF}`, 'x-xsrf-token': CSRF },
  body: new URLSearchParams({ user: EMAIL, password: PASSWORD }).toString(),
}

type Server = RunningServer

/** lib.ts's servers already carry their pid, which is all CPU-per-request measuring needs. */
function withCpu(server: RunningServer): Server {
  return server
}

/** Runs a measurement and adds the server's CPU microseconds per request to it. */
async function measured(server: Server, options: Parameters<typeof measure>[1]): Promise<Measurement & { cpuPerRequest: number }> {
  const result = await measureWithCpu(server, options)
  return { ...result, cpuPerRequest: result.cpuPerRequestUs }
}

async function login(server: RunningServer): Promise<string> {
  const response = await fetch(`${server.url}/api/authn/login`, loginRequest)
  const authorization = response.headers.get('authorization')
  if (response.status !== 200 || !authorization) throw new Error(`login failed: ${response.status} ${await response.text()}`)
  return authorization
}

type CpuMeasurement = Measurement & { cpuPerRequest: number }

async function pairedComparison(name: string, baseline: () => Promise<CpuMeasurement>, subject: () => Promise<CpuMeasurement>, target?: number): Promise<void> {
  const ratios: number[] = []
  const cpu = { baseline: [] as number[], subject: [] as number[] }
  const all = { baseline: [] as Measurement[], subject: [] as Measurement[] }
  for (let round = 0; round < rounds; round++) {
    let b: CpuMeasurement | undefined
    let t: CpuMeasurement | undefined
    const pair = await compare(
      1,
      async () => (b = await baseline()),
      async () => (t = await subject()),
    )
    ratios.push(pair.ratio)
    if (b && t) {
      cpu.baseline.push(b.cpuPerRequest)
      cpu.subject.push(t.cpuPerRequest)
    }
    all.baseline.push(pair.baseline)
    all.subject.push(pair.subject)
  }
  const mean = (items: Measurement[]) => ({
    requestsPerSecond: items.reduce((total, item) => total + item.requestsPerSecond, 0) / items.length,
    latencyP50Ms: items.reduce((total, item) => total + item.latencyP50Ms, 0) / items.length,
    latencyP99Ms: items.reduce((total, item) => total + item.latencyP99Ms, 0) / items.length,
    errors: items.reduce((total, item) => total + item.errors, 0),
    non2xx: items.reduce((total, item) => total + item.non2xx, 0),
  })
  const b = mean(all.baseline)
  const s = mean(all.subject)
  printComparison(name, { baseline: b, subject: s, ratio: s.requestsPerSecond / b.requestsPerSecond }, target)
  const sorted = [...ratios].sort((x, y) => x - y)
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0
  const verdict = target === undefined ? '' : median >= target ? `  (target ≥ ${target}: met)` : `  (target ≥ ${target}: NOT met)`
  console.log(`  per-round  ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}   median ${median.toFixed(2)}${verdict}`)
  const least = (values: number[]) => Math.min(...values)
  const cpuRatio = least(cpu.baseline) / least(cpu.subject)
  console.log(
    `  server CPU per request (least of the rounds): baseline ${least(cpu.baseline).toFixed(0)} µs, triad ${least(cpu.subject).toFixed(0)} µs → ratio ${cpuRatio.toFixed(2)} (what req/s would be on an idle machine)`,
  )
  reportRow({
    benchmark: 'authn',
    measure: `${name.replace(/ \(.*rounds.*\)$/, '')} ÷ bare Fastify hello-world (informational: the same-work yardstick is in bench/yardsticks.ts)`,
    target: '—',
    figure: `${median.toFixed(2)} median of rounds (${s.requestsPerSecond.toFixed(0)} vs ${b.requestsPerSecond.toFixed(0)} req/s; CPU ${least(cpu.subject).toFixed(0)}/${least(cpu.baseline).toFixed(0)} µs/req)`,
    met: null,
    command: 'node bench/authn.ts',
  })
}

const baseline = withCpu(await startBaseline())
const cached = withCpu(await startTriad(env))
const uncached = withCpu(await startTriad({ ...env, AUTHN_REVOCATION_CACHE: '0s' }))
try {
  const shape = `${rounds} rounds × ${durationSeconds} s, 20 connections`
  const bare = () => measured(baseline, { path: '/', durationSeconds })
  // The floor: the foundation's own cheapest route on the same instance.
  await pairedComparison(`GET /healthz on the same instance, for reference (${shape})`, bare, () => measured(cached, { path: '/healthz', durationSeconds }))
  for (const [label, server, path] of [
    ['revocation cache 1 s (default)', cached, '/api/authn/status'],
    ['revocation cache 1 s, ?embed=none (DSpace’s default projection: no _embedded)', cached, '/api/authn/status?embed=none'],
    ['revocation cache off', uncached, '/api/authn/status'],
  ] as const) {
    const authorization = await login(server)
    // As a browser: the CSRF cookie it was given is sent back with every request.
    const headers = { authorization, cookie: `DSPACE-XSRF-COOKIE=${CSRF}` }
    await pairedComparison(`GET ${path} with a valid token, ${label} (${shape})`, bare, () => measured(server, { path, headers, durationSeconds }))
  }

  const logins = await measure(cached.url, { path: '/api/authn/login', ...loginRequest, connections: 8, durationSeconds })
  console.log(`POST /api/authn/login (password, argon2id m=19 MiB t=2 p=1), 8 connections, ${durationSeconds} s`)
  console.log(
    `  ${logins.requestsPerSecond.toFixed(1)} logins/s   p50 ${logins.latencyP50Ms.toFixed(1)} ms   p99 ${logins.latencyP99Ms.toFixed(1)} ms   errors ${logins.errors}   non-2xx ${logins.non2xx}`,
  )
  reportRow({
    benchmark: 'authn',
    measure: 'POST /api/authn/login, password (argon2id m=19 MiB t=2 p=1), 8 connections',
    target: '—',
    figure: `${logins.requestsPerSecond.toFixed(1)} logins/s (p99 ${logins.latencyP99Ms.toFixed(0)} ms)`,
    met: null,
    command: 'node bench/authn.ts',
  })
} finally {
  await Promise.all([baseline.stop(), cached.stop(), uncached.stop()])
}
