// Payments, customer side: the frictionless vault + payment round trip against the bare
// Fastify baseline, same run (target ≥ 0.3 in requests per second).
//
// One round trip is what a Paylike client does for a test payment with
// `test: {tds: {challenge: false}}` (3-D Secure fingerprint, no challenge), five requests:
//   POST /vault (pcn) → POST /vault (pcsc) → POST /payments (→ tds-fingerprint challenge)
//   → POST /payments/challenges/tds-fingerprint (→ hints) → POST /payments (→ authorizationId)
// Each autocannon connection runs that sequence in a loop; every final request stores an
// authorization (tokens spent, card sealed and stored, transaction recorded). The fingerprint
// frame itself runs in a browser and adds no proof the server needs, so it is not requested.
// Then, with --steps N (default 4000; 0 skips it), the server's CPU per request of each step.
// Usage: node bench/payments-client.ts [--rounds 3 --duration 5 --connections 20 --steps 4000 --database sqlite:/dev/shm/triad.sqlite]
import autocannon from 'autocannon'
import { parseArgs } from 'node:util'
import { type Measurement, compare, cpuMicros, measure, printComparison, printPostCeiling, type RunningServer, startBaseline, startTriad, toMeasurement, basicAuth } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    database: { type: 'string', description: 'a DATABASE_URL for Triad (default: a fresh SQLite file in a temporary directory)' },
    steps: { type: 'string', default: '4000', description: 'payments to prepare for the final-step measurement (0 skips the per-step figures)' },
  },
})
const rounds = Number(values.rounds)
const durationSeconds = Number(values.duration)
const connections = Number(values.connections)
const STEPS = 5

async function testMerchantKey(url: string): Promise<string> {
  const created = await fetch(`${url}/apps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  const appKey = ((await created.json()) as { app: { key: string } }).app.key
  const merchant = await fetch(`${url}/merchants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicAuth(appKey) },
    body: JSON.stringify({ currency: 'EUR', email: 'bench@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true }),
  })
  return ((await merchant.json()) as { merchant: { key: string } }).merchant.key
}

interface Flow {
  number?: unknown
  code?: unknown
  hints?: string[]
}

let completed = 0
let failures = 0

const clientHeaders = { 'content-type': 'application/json', 'accept-version': '1' }

function paymentBody(key: string, context: Flow, hints: string[]): string {
  return JSON.stringify({
    integration: { key },
    amount: { currency: 'EUR', exponent: 2, value: 195 },
    card: { number: context.number, code: context.code, expiry: { month: 12, year: 2030 } },
    test: { tds: { challenge: false } },
    hints,
  })
}

async function clientPost(url: string, path: string, body: string): Promise<unknown> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: clientHeaders, body })
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

/**
 * Server CPU (user + system, from /proc) per request of each step of the round trip, each
 * step loaded on its own. The final step needs fresh tokens and hints per request: `count`
 * payments are prepared first, outside the measurement.
 */
async function stepCosts(server: RunningServer, baseline: RunningServer, key: string, count: number): Promise<void> {
  const prepareOne = async (): Promise<Flow> => ({
    number: await clientPost(server.url, '/vault', '{"type":"pcn","value":"4111111111111111"}'),
    code: await clientPost(server.url, '/vault', '{"type":"pcsc","value":"123"}'),
  })
  const sample = await prepareOne()
  const finals: string[] = []
  for (let done = 0; done < count; done += connections) {
    await Promise.all(
      Array.from({ length: Math.min(connections, count - done) }, async () => {
        const flow = await prepareOne()
        const { hints } = (await clientPost(server.url, '/payments/challenges/tds-fingerprint', paymentBody(key, flow, []))) as { hints: string[] }
        finals.push(paymentBody(key, flow, hints))
      }),
    )
  }
  const cpuPerRequest = async (request: Parameters<typeof autocannon>[0], of: RunningServer = server) => {
    const before = cpuMicros(of.pid)
    const result = await autocannon({ connections, ...request })
    return { us: (cpuMicros(of.pid) - before) / Math.max(result.requests.total, 1), non2xx: result.non2xx }
  }
  const post = (path: string, body: string) => cpuPerRequest({ url: `${server.url}${path}`, method: 'POST', headers: clientHeaders, body, duration: durationSeconds })
  let next = 0
  const rows: Array<[string, { us: number; non2xx: number }]> = [
    ['POST /vault (pcn)', await post('/vault', '{"type":"pcn","value":"4111111111111111"}')],
    ['POST /payments (→ fingerprint challenge)', await post('/payments', paymentBody(key, sample, []))],
    ['POST /payments/challenges/tds-fingerprint', await post('/payments/challenges/tds-fingerprint', paymentBody(key, sample, []))],
    [
      `POST /payments (→ authorizationId; ${finals.length} prepared payments)`,
      await cpuPerRequest({
        url: server.url,
        amount: finals.length,
        requests: [{ method: 'POST', path: '/payments', headers: clientHeaders, setupRequest: (request) => ({ ...request, body: finals[next++] }) }],
      }),
    ],
    ['GET /healthz', await cpuPerRequest({ url: `${server.url}/healthz`, duration: durationSeconds })],
    ['bare Fastify GET / (the baseline)', await cpuPerRequest({ url: baseline.url, duration: durationSeconds }, baseline)],
  ]
  console.log('  server CPU per request, each step loaded alone:')
  for (const [name, { us, non2xx }] of rows) console.log(`    ${name.padEnd(62)} ${us.toFixed(1).padStart(6)} µs${non2xx ? `   (non-2xx ${non2xx})` : ''}`)
}

async function roundTrips(url: string, key: string): Promise<Measurement & { roundTripsPerSecond: number }> {
  completed = 0
  const result = await autocannon({
    url,
    connections,
    duration: durationSeconds,
    requests: [
      {
        method: 'POST',
        path: '/vault',
        headers: clientHeaders,
        body: '{"type":"pcn","value":"4111111111111111"}',
        onResponse: (_status, text, context: Flow) => {
          context.number = JSON.parse(text)
        },
      },
      {
        method: 'POST',
        path: '/vault',
        headers: clientHeaders,
        body: '{"type":"pcsc","value":"123"}',
        onResponse: (_status, text, context: Flow) => {
          context.code = JSON.parse(text)
        },
      },
      { method: 'POST', path: '/payments', headers: clientHeaders, setupRequest: (request, context: Flow) => ({ ...request, body: paymentBody(key, context, []) }) },
      {
        method: 'POST',
        path: '/payments/challenges/tds-fingerprint',
        headers: clientHeaders,
        setupRequest: (request, context: Flow) => ({ ...request, body: paymentBody(key, context, []) }),
        onResponse: (_status, text, context: Flow) => {
          context.hints = (JSON.parse(text) as { hints?: string[] }).hints ?? []
        },
      },
      {
        method: 'POST',
        path: '/payments',
        headers: clientHeaders,
        setupRequest: (request, context: Flow) => ({ ...request, body: paymentBody(key, context, context.hints ?? []) }),
        onResponse: (status, text) => {
          if (status === 200 && text.includes('authorizationId')) completed++
          else failures++
        },
      },
    ],
  })
  return { ...toMeasurement(result), roundTripsPerSecond: completed / durationSeconds }
}

const baseline = await startBaseline()
const triad = await startTriad({ PAYMENTS_RATE_LIMIT: '0', ...(values.database ? { DATABASE_URL: values.database } : {}) })
try {
  const key = await testMerchantKey(triad.url)
  const trips: number[] = []
  const result = await compare(
    rounds,
    () => measure(baseline.url, { connections, durationSeconds }),
    async () => {
      const measured = await roundTrips(triad.url, key)
      trips.push(measured.roundTripsPerSecond)
      return measured
    },
  )
  printComparison(
    `Frictionless vault + payment round trip (${STEPS} requests) on SQLite vs bare Fastify (${rounds} rounds × ${durationSeconds} s, ${connections} connections)`,
    result,
    0.3,
  )
  const mean = trips.reduce((total, value) => total + value, 0) / trips.length
  console.log(`  round trips ${mean.toFixed(0)}/s (authorizations stored per second); failed final steps ${failures}`)

  // Where the ceiling is: one request that writes one row, and one that touches no database.
  const vault = await compare(
    1,
    () => measure(baseline.url, { connections, durationSeconds }),
    () =>
      measure(triad.url, {
        path: '/vault',
        method: 'POST',
        headers: clientHeaders,
        body: '{"type":"pcn","value":"4111111111111111"}',
        connections,
        durationSeconds,
      }),
  )
  printComparison('  (reference) POST /vault alone (no database write) vs bare Fastify', vault)
  const health = await compare(
    1,
    () => measure(baseline.url, { connections, durationSeconds }),
    () => measure(triad.url, { path: '/healthz', connections, durationSeconds }),
  )
  printComparison('  (reference) GET /healthz of the same server vs bare Fastify', health)
  // The final step's body: a payment with two vault tokens and a hint, as the client sends it.
  const token = (length: number) => ({ token: `v1.${'x'.repeat(length)}` })
  const finalBody = paymentBody(key, { number: token(110), code: token(95) }, [`tds-fp-start.${'x'.repeat(52)}`])
  await printPostCeiling(baseline.url, finalBody, { durationSeconds, connections })
  if (Number(values.steps) > 0) await stepCosts(triad, baseline, key, Number(values.steps))
} finally {
  await Promise.all([baseline.stop(), triad.stop()])
}
