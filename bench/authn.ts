// authn benchmarks: GET /api/authn/status with a valid token against a bare Fastify
// hello-world (same run, alternating rounds), with and without the revocation cache, and
// password logins per second with the argon2id parameters in src/core/security/password.ts.
// Usage: node bench/authn.ts [--rounds 3 --duration 5]
import { parseArgs } from 'node:util'
import { compare, measure, printComparison, type RunningServer, startBaseline, startTriad } from './lib.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' } } })
const rounds = Number(values.rounds)
const durationSeconds = Number(values.duration)

const EMAIL = 'bench-admin@example.org'
const PASSWORD = 'bench password 123'
const CSRF = 'bench-csrf-token'
const env = { TRIAD_SERVICES: 'authn', AUTHN_ADMIN_EMAIL: EMAIL, AUTHN_ADMIN_PASSWORD: PASSWORD }
const loginRequest = {
  method: 'POST' as const,
  headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `DSPACE-XSRF-COOKIE=${CSRF}`, 'x-xsrf-token': CSRF },
  body: new URLSearchParams({ user: EMAIL, password: PASSWORD }).toString(),
}

async function login(server: RunningServer): Promise<string> {
  const response = await fetch(`${server.url}/api/authn/login`, loginRequest)
  const authorization = response.headers.get('authorization')
  if (response.status !== 200 || !authorization) throw new Error(`login failed: ${response.status} ${await response.text()}`)
  return authorization
}

const baseline = await startBaseline()
const cached = await startTriad(env)
const uncached = await startTriad({ ...env, AUTHN_REVOCATION_CACHE: '0s' })
try {
  // The floor: the foundation's own cheapest route on the same instance.
  const floor = await compare(
    rounds,
    () => measure(baseline.url, { path: '/', durationSeconds }),
    () => measure(cached.url, { path: '/healthz', durationSeconds }),
  )
  printComparison(`GET /healthz on the same instance, for reference (${rounds} rounds × ${durationSeconds} s, 20 connections)`, floor)
  for (const [label, server] of [
    ['revocation cache 1 s (default)', cached],
    ['revocation cache off', uncached],
  ] as const) {
    const authorization = await login(server)
    // As a browser: the CSRF cookie it was given is sent back with every request.
    const headers = { authorization, cookie: `DSPACE-XSRF-COOKIE=${CSRF}` }
    const result = await compare(
      rounds,
      () => measure(baseline.url, { path: '/', durationSeconds }),
      () => measure(server.url, { path: '/api/authn/status', headers, durationSeconds }),
    )
    printComparison(`GET /api/authn/status with a valid token, ${label} (${rounds} rounds × ${durationSeconds} s, 20 connections)`, result, 0.5)
  }

  const logins = await measure(cached.url, { path: '/api/authn/login', ...loginRequest, connections: 8, durationSeconds })
  console.log(`POST /api/authn/login (password, argon2id m=19 MiB t=2 p=1), 8 connections, ${durationSeconds} s`)
  console.log(
    `  ${logins.requestsPerSecond.toFixed(1)} logins/s   p50 ${logins.latencyP50Ms.toFixed(1)} ms   p99 ${logins.latencyP99Ms.toFixed(1)} ms   errors ${logins.errors}   non-2xx ${logins.non2xx}`,
  )
} finally {
  await Promise.all([baseline.stop(), cached.stop(), uncached.stop()])
}
