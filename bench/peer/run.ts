// The peer side by side (issue 16, item 2): Triad's avatar API against the meta-human backend
// it replaces (examples/backend-python of github:LessUp/meta-human, FastAPI under uvicorn), both
// on their mock reply, driven with the same load in alternating rounds of the same run.
// Usage: npm run bench:peer -- [--rounds 3 --duration 5 --connections 20 --quick --source <meta-human git dir, checkout or URL>
//   --python <interpreter> --routes chat,stream,ws,history]  (default Debian's /usr/bin/python3 with the packages setup.sh installs; another interpreter
//   whose environment has pydantic 2 runs the peer without the bridge, which then does nothing)
// What was bridged to run the peer, and which way it biases the figures: bench/peer/README.md.
import autocannon from 'autocannon'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { cpuMicros, freePort, reportRow, type RunningServer, startTriad, stopper, toMeasurement } from '../lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    quick: { type: 'boolean', default: false },
    source: { type: 'string' },
    python: { type: 'string', default: '/usr/bin/python3' },
    // Some of the routes only (their short names: chat, stream, ws, history), e.g. `--routes ws`.
    routes: { type: 'string', default: 'chat,stream,ws,history' },
  },
})
const rounds = values.quick ? 1 : Number(values.rounds)
const durationSeconds = values.quick ? 1 : Number(values.duration)
const connections = Number(values.connections)
const here = new URL('.', import.meta.url).pathname
const peerSource = join(here, 'source')
const python = values.python

// Chinese in: both mocks then answer in Chinese, streamed one character per token.
const userText = '你好，今天过得怎么样？'
const chatBody = (sessionId: string) => JSON.stringify({ sessionId, userText })
const jsonHeaders = { 'content-type': 'application/json' }

interface Figures {
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  errors: number
  non2xx: number
  cpuPerRequestUs: number
  rssMb: number
}

interface Server extends RunningServer {
  name: 'peer' | 'peer-bare' | 'triad'
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

async function waitForHealth(url: string, exited: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`${url}: the server exited while starting`)
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await sleep(100)
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`)
}

/**
 * The peer as its docs run it (`uvicorn app.main:app`, one process; without --reload, a
 * development watcher), from its untouched source, with the pydantic bridge on PYTHONPATH.
 * Its per-IP limiter is off (RATE_LIMIT_RPM=0): at any budget above the load it filters a list
 * of every request of the last minute on each request. Logs at its default level, to a file.
 * `peer-bare` is the same app without its BaseHTTPMiddleware layers (compat/peer_without_middleware.py).
 */
async function startPeer(name: 'peer' | 'peer-bare'): Promise<Server> {
  const logDir = mkdtempSync(join(tmpdir(), 'triad-bench-peer-'))
  const port = await freePort()
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    PYTHONPATH: join(here, 'compat'),
    RATE_LIMIT_RPM: '0',
    LOG_LEVEL: 'INFO',
  }
  const log = openSync(join(logDir, 'peer.log'), 'a')
  const app = name === 'peer' ? 'app.main:app' : 'peer_without_middleware:app'
  const child = spawn(python, ['-m', 'uvicorn', app, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: peerSource,
    env,
    stdio: ['ignore', log, log],
  })
  const url = `http://127.0.0.1:${port}`
  await waitForHealth(`${url}/health`, () => child.exitCode !== null)
  return { name, url, pid: child.pid ?? 0, stop: stopper(child) }
}

/** Triad on its mock with no pause between streamed tokens (the peer's mock has none). */
async function startTriadServer(): Promise<Server> {
  // The limiter stays on (in memory) so its cost is counted, with a budget the load never reaches.
  const triad = await startTriad({ AVATAR_MOCK_TOKEN_DELAY: '0ms', AVATAR_RATE_LIMIT: '100000000/min' })
  return { ...triad, name: 'triad' }
}

/** Whether `GET /ws` upgrades (101) or not (Triad before its WebSocket route: 404). */
async function webSocketStatus(url: string): Promise<number> {
  const request = httpRequest(`${url}/ws?session_id=bench-probe`, {
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
  })
  request.end()
  const status = await Promise.race([
    once(request, 'upgrade').then(([response, socket]) => {
      socket.destroy()
      return response.statusCode as number
    }),
    once(request, 'response').then(([response]) => {
      response.resume()
      return response.statusCode as number
    }),
  ])
  request.destroy()
  return status
}

/** Drives an HTTP route with autocannon for a bounded time; server CPU and RSS from /proc. */
async function driveHttp(server: Server, options: { path: string; method?: 'GET' | 'POST'; body?: string; seconds: number }): Promise<Figures> {
  const before = cpuMicros(server.pid)
  const result = await autocannon({
    url: server.url + options.path,
    method: options.method ?? 'GET',
    headers: options.body ? jsonHeaders : undefined,
    body: options.body,
    connections,
    duration: options.seconds,
  })
  const measured = toMeasurement(result)
  return { ...measured, cpuPerRequestUs: (cpuMicros(server.pid) - before) / Math.max(result.requests.total, 1), rssMb: rssMb(server.pid) }
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))])

/**
 * `connections` WebSockets to `/ws?session_id=…`, each sending a chat turn and waiting for its
 * `done` frame before the next, for a bounded time. Latency is per turn, send to `done`.
 */
async function driveWebSocket(server: Server, seconds: number): Promise<Figures> {
  const base = server.url.replace(/^http/, 'ws')
  const message = JSON.stringify({ type: 'chat', userText })
  const latencies: number[] = []
  let errors = 0
  const before = cpuMicros(server.pid)
  const started = performance.now()
  const deadline = started + seconds * 1000
  const client = async (index: number) => {
    const socket = new WebSocket(`${base}/ws?session_id=bench-ws-${server.name}-${index}`)
    let settle: ((outcome: 'done' | 'error') => void) | undefined
    socket.onmessage = (event) => {
      const text = String(event.data)
      // Cheaper than parsing every token frame; the peer writes `"type": "done"` in some paths.
      if (/"type":\s?"done"/.test(text)) settle?.('done')
      else if (/"type":\s?"error"/.test(text)) settle?.('error')
    }
    socket.onclose = () => settle?.('error')
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve()
      socket.onerror = () => reject(new Error('handshake failed'))
    })
    try {
      while (performance.now() < deadline) {
        const turnStarted = performance.now()
        const outcome = await new Promise<'done' | 'error' | 'timeout'>((resolve) => {
          settle = resolve
          setTimeout(() => resolve('timeout'), 10_000).unref()
          socket.send(message)
        })
        if (outcome !== 'done') {
          errors++
          if (socket.readyState !== WebSocket.OPEN) return
          continue
        }
        latencies.push(performance.now() - turnStarted)
      }
    } finally {
      settle = undefined
      socket.close()
    }
  }
  await Promise.all(Array.from({ length: connections }, (_, index) => client(index).catch(() => void errors++)))
  const elapsedSeconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requestsPerSecond: latencies.length / elapsedSeconds,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    errors,
    non2xx: 0,
    cpuPerRequestUs: (cpuMicros(server.pid) - before) / Math.max(latencies.length, 1),
    rssMb: rssMb(server.pid),
  }
}

/** One streamed reply read to its end: how many token events it had, and that it ended with done. */
async function streamShape(server: Server): Promise<string> {
  const response = await fetch(`${server.url}/v1/chat/stream`, { method: 'POST', headers: jsonHeaders, body: chatBody('bench-check') })
  const text = await response.text()
  const events = text.split('\n\n').filter((event) => event.startsWith('data: '))
  const tokens = events.filter((event) => /"type":\s?"token"/.test(event)).length
  const done = /"type":\s?"done"/.test(events.at(-1) ?? '')
  if (response.status !== 200 || !done) throw new Error(`${server.name}: POST /v1/chat/stream answered ${response.status} without a final done event`)
  return `${tokens} token events then done`
}

/** Ten chat turns in `bench-history`, so that the history route answers the same 20 messages on both. */
async function seedHistory(server: Server): Promise<void> {
  for (let turn = 0; turn < 10; turn++) {
    const response = await fetch(`${server.url}/v1/chat`, { method: 'POST', headers: jsonHeaders, body: chatBody('bench-history') })
    if (response.status !== 200) throw new Error(`${server.name}: POST /v1/chat answered ${response.status}`)
  }
  const history = (await (await fetch(`${server.url}/v1/session/bench-history/history`)).json()) as { messages?: unknown[] }
  if (history.messages?.length !== 20) throw new Error(`${server.name}: the seeded history has ${history.messages?.length} messages, not 20`)
}

interface Route {
  name: string
  /** What `--routes` calls it. */
  short: string
  drive: (server: Server, seconds: number) => Promise<Figures>
}

const allRoutes: Route[] = [
  { name: 'POST /v1/chat', short: 'chat', drive: (server, seconds) => driveHttp(server, { path: '/v1/chat', method: 'POST', body: chatBody('bench-chat'), seconds }) },
  { name: 'POST /v1/chat/stream', short: 'stream', drive: (server, seconds) => driveHttp(server, { path: '/v1/chat/stream', method: 'POST', body: chatBody('bench-stream'), seconds }) },
  { name: 'WebSocket /ws turn', short: 'ws', drive: driveWebSocket },
  { name: 'GET /v1/session/{id}/history', short: 'history', drive: (server, seconds) => driveHttp(server, { path: '/v1/session/bench-history/history', seconds }) },
]
const picked = new Set(String(values.routes).split(',').map((name) => name.trim()))
for (const name of picked) if (!allRoutes.some((route) => route.short === name)) throw new Error(`--routes: no route called ${name} (chat, stream, ws, history)`)
const routes = allRoutes.filter((route) => picked.has(route.short))
// Rows name the command that measured them: the full run, or the routes picked.
const command = picked.size === allRoutes.length ? 'node bench/peer/run.ts' : `node bench/peer/run.ts --routes ${routes.map((route) => route.short).join(',')}`

function peerRuntime(): string {
  const script = 'import fastapi, pydantic, starlette, uvicorn, sys; print(f"Python {sys.version.split()[0]}, FastAPI {fastapi.__version__}, Starlette {starlette.__version__}, uvicorn {uvicorn.__version__}, pydantic {pydantic.VERSION}")'
  return execFileSync(python, ['-c', script], { encoding: 'utf8' }).trim()
}

function pydanticCostUs(): number {
  const output = execFileSync(python, [join(here, 'pydantic-cost.py'), chatBody('bench-chat')], {
    cwd: peerSource,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: join(here, 'compat'), LOG_LEVEL: 'WARNING' },
    encoding: 'utf8',
  })
  return Number(output.trim())
}

const mean = (items: number[]) => items.reduce((total, item) => total + item, 0) / Math.max(items.length, 1)
const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a')

function summarize(samples: Figures[]): Figures {
  return {
    requestsPerSecond: mean(samples.map((s) => s.requestsPerSecond)),
    latencyP50Ms: mean(samples.map((s) => s.latencyP50Ms)),
    latencyP99Ms: mean(samples.map((s) => s.latencyP99Ms)),
    errors: samples.reduce((total, s) => total + s.errors, 0),
    non2xx: samples.reduce((total, s) => total + s.non2xx, 0),
    cpuPerRequestUs: mean(samples.map((s) => s.cpuPerRequestUs)),
    rssMb: Math.max(...samples.map((s) => s.rssMb)),
  }
}

const setupArgs = values.source ? [values.source] : []
if (!values.source && !existsSync(join(peerSource, 'app/main.py')) && process.env.PEER_SOURCE) setupArgs.push(process.env.PEER_SOURCE)
execFileSync(join(here, 'setup.sh'), setupArgs, { stdio: 'inherit' })
const peerCommit = readFileSync(join(peerSource, '.meta-human-commit'), 'utf8').trim()

const servers: Server[] = []
try {
  // One after another, each kept as soon as it runs, so that a failed start stops the others.
  for (const start of [() => startPeer('peer'), () => startPeer('peer-bare'), startTriadServer]) servers.push(await start())
  const [peer, peerBare, triad] = servers
  const triadWs = await webSocketStatus(triad.url)
  for (const server of [peer, peerBare]) {
    const status = await webSocketStatus(server.url)
    if (status !== 101) throw new Error(`${server.name}: /ws answered the handshake with ${status}`)
  }
  if (triadWs !== 101 && triadWs !== 404) throw new Error(`Triad's /ws answered the handshake with ${triadWs}`)
  const active = (route: Route, server: Server) => !(route.name.startsWith('WebSocket') && server.name === 'triad' && triadWs !== 101)

  const idle = new Map(servers.map((server) => [server.name, rssMb(server.pid)]))
  for (const server of servers) {
    await seedHistory(server)
    console.log(`${server.name}: ${await streamShape(server)} on POST /v1/chat/stream`)
  }
  // One second of each route on each server first, not counted (V8 compiles hot code on the way).
  for (const route of routes) for (const server of servers) if (active(route, server)) await route.drive(server, 1)

  const samples = new Map<string, Figures[]>()
  for (let round = 0; round < rounds; round++) {
    // Rotate who goes first, so that a drift of the machine's load does not favour one side.
    const order = [...servers.slice(round % servers.length), ...servers.slice(0, round % servers.length)]
    for (const route of routes) {
      const line: string[] = []
      for (const server of order) {
        if (!active(route, server)) continue
        const figures = await route.drive(server, durationSeconds)
        const key = `${route.name}|${server.name}`
        samples.set(key, [...(samples.get(key) ?? []), figures])
        line.push(`${server.name} ${fixed(figures.requestsPerSecond)} req/s p99 ${fixed(figures.latencyP99Ms, 1)} ms CPU ${fixed(figures.cpuPerRequestUs)} µs`)
      }
      console.log(`  round ${round + 1} ${route.name}: ${line.join('; ')}`)
    }
  }

  const peerPydanticUs = pydanticCostUs()
  console.log()
  console.log(
    `Triad vs the meta-human backend (commit ${peerCommit.slice(0, 12)}), ${rounds} round(s) × ${durationSeconds} s per route and server, ${connections} connections, same run.`,
  )
  console.log(`peer runtime: ${peerRuntime()} (${python})`)
  console.log('peer = the backend as run; peer-bare = the same without its four BaseHTTPMiddleware layers (a bound, not the peer).')
  console.log('| route | server | req/s | Triad ÷ server | p50 ms | p99 ms | server CPU µs/request | RSS MB | errors |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  const verdicts: string[] = []
  for (const route of routes) {
    const triadSamples = samples.get(`${route.name}|triad`)
    const t = triadSamples ? summarize(triadSamples) : undefined
    for (const server of servers) {
      const serverSamples = samples.get(`${route.name}|${server.name}`)
      if (!serverSamples) {
        console.log(`| ${route.name} | ${server.name} | n/a (handshake ${triadWs}) | | | | | | |`)
        continue
      }
      const f = summarize(serverSamples)
      const ratio = t && server !== triad ? `**${(t.requestsPerSecond / f.requestsPerSecond).toFixed(1)}×**` : ''
      console.log(
        `| ${route.name} | ${server.name} | ${fixed(f.requestsPerSecond)} | ${ratio} | ${fixed(f.latencyP50Ms, 1)} | ${fixed(f.latencyP99Ms, 1)} | ${fixed(f.cpuPerRequestUs)} | ${fixed(f.rssMb)} | ${f.errors + f.non2xx} |`,
      )
      if (t && server === peer) {
        const ratioValue = t.requestsPerSecond / f.requestsPerSecond
        verdicts.push(
          `${route.name}: Triad ${ratioValue.toFixed(1)}× the peer's req/s (target ≥ 5×: ${ratioValue >= 5 ? 'met' : 'NOT met'}), p99 ${fixed(t.latencyP99Ms, 1)} vs ${fixed(f.latencyP99Ms, 1)} ms (target lower: ${t.latencyP99Ms < f.latencyP99Ms ? 'met' : 'NOT met'})`,
        )
        reportRow({
          benchmark: 'peer',
          measure: `${route.name}: Triad ÷ the meta-human backend (FastAPI), req/s, at a lower p99`,
          target: '≥ 5×, lower p99',
          figure: `${ratioValue.toFixed(1)}× (${fixed(t.requestsPerSecond)} vs ${fixed(f.requestsPerSecond)} req/s; p99 ${fixed(t.latencyP99Ms, 1)} vs ${fixed(f.latencyP99Ms, 1)} ms; RSS ${fixed(t.rssMb)} vs ${fixed(f.rssMb)} MB)`,
          met: values.quick ? null : ratioValue >= 5 && t.latencyP99Ms < f.latencyP99Ms,
          command,
        })
      }
    }
  }
  for (const verdict of verdicts) console.log(verdict)
  console.log(
    `RSS idle before the load / peak over the run (VmHWM), MB: ${servers.map((server) => `${server.name} ${fixed(idle.get(server.name) ?? Number.NaN)} / ${fixed(rssMb(server.pid, 'VmHWM'))}`).join(', ')}`,
  )
  console.log(`pydantic work in one peer chat request (body in, response model out, timed alone): ${fixed(peerPydanticUs, 1)} µs`)
} finally {
  await Promise.all(servers.map((server) => server.stop()))
}
