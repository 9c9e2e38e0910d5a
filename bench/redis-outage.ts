// Redis cut for 45 s under load (issue 25 item 4, issue 35 item 6): `triad serve` with REDIS_URL
// through the project's fault proxy (test/helpers/fault-proxy.ts), 8 clients looping over two
// rate-limited routes (payments GET /me with an API key, avatar POST /v1/chat), an operator
// sending `say` every 100 ms, an event stream and a WebSocket listening to the operator's
// session, and /readyz and /metrics polled. Prints, for the same run: the latency the limited
// routes add while Redis is gone (p50, p99 vs the baseline before the cut), how soon the operator
// channel answers 503, what /readyz and triad_redis_up said, how soon after Redis's return the
// limiter counts in Redis again and both listeners hear a say, and whether the session's history
// holds exactly the says answered 200.
//   node bench/redis-outage.ts                     warm-up 3 s, baseline 10 s, outage 45 s, recovery 5 s
//   node bench/redis-outage.ts --outage 300        a 5 min outage
//   node bench/redis-outage.ts --fault partition   Redis silently loses the connections instead of refusing them
//   node bench/redis-outage.ts --outage 10 --baseline 5 --connections 16
//   node bench/redis-outage.ts --smoke             a few seconds (CI), no targets asserted
// Needs Redis on 127.0.0.1:6379 (TEST_REDIS_URL to change it); writes only the limiter's keys.
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import WebSocket from 'ws'
import { hashKey } from '../src/services/payments/modules/apps/index.ts'
import { startFaultProxy } from '../test/helpers/fault-proxy.ts'
import { basicAuth, reportRow, smoke, startTriad, verdict } from './lib.ts'

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    outage: { type: 'string', default: '45' },
    baseline: { type: 'string', default: '10' },
    recovery: { type: 'string', default: '5' },
    connections: { type: 'string', default: '8' },
    fault: { type: 'string', default: 'refused' },
  },
})
if (values.fault !== 'refused' && values.fault !== 'partition') throw new Error('--fault is refused or partition')
const fault = values.fault
const outageS = smoke ? 3 : Number(values.outage)
const baselineS = smoke ? 2 : Number(values.baseline)
const recoveryS = smoke ? 3 : Number(values.recovery)
const warmUpS = smoke ? 1 : 3
const connections = Number(values.connections)
const command = `node bench/redis-outage.ts${smoke ? ' --smoke' : process.argv.slice(2).map((arg) => ` ${arg}`).join('')}`
const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379')
const OPERATOR_KEY = 'bench-operator-key-0123456789'
const METRICS_TOKEN = 'bench-metrics-token-0123456789'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}
const ms = (value: number) => `${value.toFixed(1)} ms`
// Not Math.max(...values): a 5 min outage under load is more requests than arguments a call takes.
const largest = (values: number[]) => values.reduce((most, value) => Math.max(most, value), -Infinity)

const proxy = await startFaultProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) })
const direct = new Redis(redisUrl.href)
const triad = await startTriad({
  REDIS_URL: `redis://${proxy.address}`,
  PAYMENTS_RATE_LIMIT: '1000000/min',
  AVATAR_RATE_LIMIT: '1000000/min',
  AVATAR_OPERATOR_RATE_LIMIT: '0',
  AVATAR_MOCK_TOKEN_DELAY: '0ms',
  AVATAR_OPERATOR_KEY: OPERATOR_KEY,
  METRICS_TOKEN,
  LOG_LEVEL: 'warn',
})
const { url } = triad

try {
  const created = await fetch(`${url}/apps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })
  const key = ((await created.json()) as { app: { key: string } }).app.key
  const session = `redis-outage-${process.pid}`
  const routes = {
    'payments GET /me': () => fetch(`${url}/me`, { headers: { authorization: basicAuth(key) } }),
    'avatar POST /v1/chat': () => fetch(`${url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userText: 'hi' }) }),
  }
  // Warm-up first (a fresh process's first seconds are slower), not counted.
  type Phase = 'warm-up' | 'baseline' | 'outage' | 'recovery'
  let phase: Phase = 'warm-up'
  let running = true
  const latencies = new Map<string, number[]>()
  let failures = 0
  let downAt = Infinity
  const slowestOutage = { ms: 0, startedAfterCut: 0 }
  const record = (route: string, at: Phase, value: number, started: number) => {
    if (at === 'outage' && value > slowestOutage.ms) Object.assign(slowestOutage, { ms: value, startedAfterCut: started - downAt })
    const name = `${route} ${at}`
    const list = latencies.get(name) ?? []
    list.push(value)
    latencies.set(name, list)
  }
  const clients = Array.from({ length: connections }, async (_, index) => {
    const names = Object.keys(routes) as Array<keyof typeof routes>
    for (let i = index; running; i++) {
      const route = names[i % names.length]
      const at = phase
      const started = performance.now()
      const response = await routes[route]()
      await response.arrayBuffer()
      if (response.status !== 200 || !response.headers.get('x-ratelimit-limit')) failures++
      else record(route, at, performance.now() - started, started)
    }
  })

  // The page listening to the operator's session, through the whole run, on an event stream
  // and on a WebSocket.
  const heard: Array<{ at: number; id: string }> = []
  const heardOnSocket = new Map<string, number>()
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ws?session_id=${session}`)
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; id?: string }
    if (frame.type === 'say') heardOnSocket.set(String(frame.id), performance.now())
  })
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const page = new AbortController()
  const listening = (async () => {
    const response = await fetch(`${url}/v1/session/${session}/events`, { signal: page.signal })
    const decoder = new TextDecoder()
    let buffer = ''
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      for (const line of lines) if (line.startsWith('data: ')) heard.push({ at: performance.now(), id: (JSON.parse(line.slice(6)) as { id: string }).id })
    }
  })().catch(() => {})

  // The operator: a say every 100 ms; each answer's status, latency and the time it was sent.
  const says: Array<{ at: number; status: number; latency: number; text: string; id?: string }> = []
  const operator = (async () => {
    while (running) {
      const started = performance.now()
      const text = `Line ${says.length + 1}.`
      const response = await fetch(`${url}/v1/session/${session}/say`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${OPERATOR_KEY}` },
        body: JSON.stringify({ text }),
      })
      const body = (await response.json()) as { event?: { id: string } }
      says.push({ at: started, status: response.status, latency: performance.now() - started, text, id: body.event?.id })
      await sleep(100)
    }
  })()

  // /readyz every 500 ms, and the limiter's count in Redis.
  const readiness: Array<{ at: number; status: number; redis?: string }> = []
  const probe = (async () => {
    while (running) {
      const response = await fetch(`${url}/readyz`)
      const body = (await response.json()) as { checks?: { redis?: string } }
      readiness.push({ at: performance.now(), status: response.status, redis: body.checks?.redis })
      await sleep(500)
    }
  })()
  const scrapeUp = async () => /^triad_redis_up (\d)$/m.exec(await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text())?.[1]
  const limiterKey = () => `triad:payments:rl:${Math.floor(Date.now() / 60_000) * 60_000}:key:${hashKey(key)}`

  await sleep(warmUpS * 1000)
  phase = 'baseline'
  await sleep(baselineS * 1000)
  const upBefore = await scrapeUp()
  phase = 'outage'
  downAt = performance.now()
  if (fault === 'refused') await proxy.down()
  else proxy.partition()
  const upAfterFault = await scrapeUp()
  await sleep(outageS * 1000)
  const countBefore = Number(await direct.get(limiterKey()))
  phase = 'recovery'
  const upAt = performance.now()
  await proxy.up()
  let limiterBackMs = NaN
  for (let waited = 0; waited < recoveryS * 1000; waited += 20) {
    if (Number(await direct.get(limiterKey())) > countBefore) {
      limiterBackMs = performance.now() - upAt
      break
    }
    await sleep(20)
  }
  await sleep(Math.max(0, recoveryS * 1000 - (performance.now() - upAt)))
  const upAfterReturn = await scrapeUp()
  running = false
  await Promise.all([...clients, operator, probe])
  page.abort()
  socket.close()
  await listening
  const history = (await (await fetch(`${url}/v1/session/${session}/history`)).json()) as { messages: Array<{ role: string; content: string }> }
  const stored = new Set(history.messages.filter((message) => message.role === 'operator').map((message) => message.content))

  const faultName = fault === 'refused' ? 'connections refused' : 'a partition after which Redis no longer knows the connections'
  console.log(`Redis cut for ${outageS} s (${faultName}) under ${connections} clients (baseline ${baselineS} s before after ${warmUpS} s of warm-up, recovery ${recoveryS} s after), one Triad process on SQLite`)
  const rows: Array<[string, number, number]> = []
  for (const route of Object.keys(routes)) {
    const before = latencies.get(`${route} baseline`) ?? []
    const during = latencies.get(`${route} outage`) ?? []
    const extra50 = percentile(during, 50) - percentile(before, 50)
    const extra99 = percentile(during, 99) - percentile(before, 99)
    rows.push([route, extra50, extra99])
    console.log(
      `  ${route}: p50 ${ms(percentile(before, 50))} → ${ms(percentile(during, 50))}, p99 ${ms(percentile(before, 99))} → ${ms(percentile(during, 99))}, ` +
        `max during the outage ${ms(largest(during))} (${before.length} and ${during.length} requests)`,
    )
  }
  console.log(`  requests failed or not limited: ${failures}; the slowest during the outage (${ms(slowestOutage.ms)}) was sent ${ms(slowestOutage.startedAfterCut)} after the cut`)
  const firstRefused = says.find((say) => say.at >= downAt && say.status === 503)
  // From the first refusal: a partition is noticed only when a command goes unanswered.
  const refused = says.filter((say) => say.at >= (firstRefused?.at ?? downAt) && say.at < upAt)
  const refusedSlowest = largest(refused.map((say) => say.latency))
  const statuses = [...new Set(refused.map((say) => say.status))].join(', ')
  console.log(
    `  operator say: first 503 answered ${ms((firstRefused?.at ?? NaN) + (firstRefused?.latency ?? NaN) - downAt)} after the cut; ` +
      `from then to the return ${refused.length} says answered ${statuses}, slowest ${ms(refusedSlowest)}`,
  )
  const heardOnStream = new Map(heard.map((heardSay) => [heardSay.id, heardSay.at]))
  const delivered = says.find((say) => say.at >= upAt && say.status === 200 && say.id !== undefined && heardOnStream.has(say.id) && heardOnSocket.has(say.id))
  const channelBackMs = delivered?.id === undefined ? NaN : Math.max(heardOnStream.get(delivered.id) ?? NaN, heardOnSocket.get(delivered.id) ?? NaN) - upAt
  console.log(`  after Redis's return: the limiter counted in Redis in ${ms(limiterBackMs)}; the event stream and the WebSocket listening through the outage both heard a say ${ms(channelBackMs)} after`)
  const accepted = says.filter((say) => say.status === 200)
  const notAccepted = says.filter((say) => say.status !== 200)
  const acceptedMissing = accepted.filter((say) => !stored.has(say.text)).length
  const refusedKept = notAccepted.filter((say) => stored.has(say.text)).length
  console.log(`  history: ${accepted.length - acceptedMissing} of ${accepted.length} says answered 200 kept, ${refusedKept} of ${notAccepted.length} answered otherwise kept`)
  const readyDuring = readiness.filter((probe) => probe.at > downAt + 100 && probe.at < upAt)
  console.log(
    `  /readyz during the outage: ${[...new Set(readyDuring.map((probe) => `${probe.status} redis ${probe.redis}`))].join(', ')} (${readyDuring.length} probes); ` +
      `triad_redis_up ${upBefore} before, ${upAfterFault} at the first scrape after the cut, ${upAfterReturn} after the return`,
  )

  const worstExtra = Math.max(...rows.map(([, extra50, extra99]) => Math.max(extra50, extra99)))
  reportRow({
    benchmark: 'redis-outage',
    measure: `Redis down ${outageS} s under load: latency added to rate-limited requests (payments GET /me, avatar POST /v1/chat), p50 and p99 vs before the cut`,
    target: '≤ 50 ms',
    figure: rows.map(([route, extra50, extra99]) => `${route} ${extra50.toFixed(1)} / ${extra99.toFixed(1)} ms`).join('; '),
    met: verdict(worstExtra <= 50 && failures === 0),
    command,
  })
  reportRow({
    benchmark: 'redis-outage',
    measure: 'Redis down: the operator channel (POST /v1/session/{id}/say) answers 503, slowest answer during the outage',
    target: '≤ 1 s',
    figure: `${ms(refusedSlowest)} (statuses ${statuses})`,
    met: verdict(refusedSlowest <= 1000 && statuses === '503'),
    command,
  })
  reportRow({
    benchmark: 'redis-outage',
    measure: `Redis back after ${outageS} s: the limiter counts in Redis again, and a say reaches both an event stream and a WebSocket that listened through the outage, after Redis's return`,
    target: '≤ 2 s',
    figure: `limiter ${ms(limiterBackMs)}, channel ${ms(channelBackMs)}`,
    met: verdict(limiterBackMs <= 2000 && channelBackMs <= 2000),
    command,
  })
  reportRow({
    benchmark: 'redis-outage',
    measure: 'Redis down and back: the says kept in the session history are exactly those answered 200',
    target: 'all, and no other',
    figure: `${accepted.length - acceptedMissing} of ${accepted.length} answered 200 kept; ${refusedKept} of ${notAccepted.length} answered ${[...new Set(notAccepted.map((say) => say.status))].join(' or ')} kept`,
    met: verdict(acceptedMissing === 0 && refusedKept === 0),
    command,
  })
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await triad.stop()
  direct.disconnect()
  await proxy.close()
  // Exit explicitly: about one run in eight, Node's clean-up after the last handle closed spun at
  // full CPU forever (main thread in Environment::CleanupHandles, where no timer runs: nodejs/node
  // issue 47748), holding CI until the runner killed the benchmark. process.exit skips that step.
  process.exit(process.exitCode ?? 0)
}
