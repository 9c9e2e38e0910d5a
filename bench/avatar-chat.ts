// Avatar chat benchmarks (issue 4). Usage: node bench/avatar-chat.ts [--rounds 3 --duration 5 --requests 200 --streams 1000
//   --sockets 1000 --parts streaming,chat,memory,memory-mock,transports --smoke]
// 1. Streaming overhead: time to first token and total stream time through POST /v1/chat/stream
//    against calling the fake OpenAI-compatible model directly (sequential requests, medians).
// 2. POST /v1/chat on the mock with a session against the bare-Fastify baseline, same run.
// 3. Resident memory of Triad holding 1,000 concurrent open streams.
// 4. SSE against the /ws WebSocket transport on the same fake model turn (issue 16): time to first
//    token, server CPU per streamed token, and Triad's RSS with N open idle WebSockets.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, openSync, readFileSync } from 'node:fs'
import { Agent, type IncomingMessage, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { compare, cpuMicros, freePort, measureWithCpu, printComparison, printPostCeiling, reportRow, type RunningServer, smoke, startBaseline, stopper, verdict } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    requests: { type: 'string', default: '200' },
    streams: { type: 'string', default: '1000' },
    sockets: { type: 'string', default: '1000' },
    parts: { type: 'string', default: 'streaming,chat,memory,memory-mock,transports' },
    smoke: { type: 'boolean', default: false },
  },
})
if (smoke) Object.assign(values, { rounds: '1', duration: '1', requests: '10', streams: '50', sockets: '50' })
const root = new URL('..', import.meta.url).pathname

async function startFakeModel(pieces: number, delayMs: number): Promise<RunningServer> {
  const child = spawn(process.execPath, [join(root, 'bench/avatar-chat-fake-llm.ts'), String(pieces), String(delayMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  if (!child.stdout || child.pid === undefined) throw new Error('could not start the fake model')
  const lines = createInterface({ input: child.stdout })
  for await (const line of lines) if (line.startsWith('http')) return { url: line.trim(), pid: child.pid, stop: stopper(child) }
  throw new Error('fake model exited early')
}

/** Like lib.ts's startTriad (avatar only, logs to a file), but keeps the pid for memory figures. */
async function startAvatar(env: Record<string, string>): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'triad-bench-avatar-'))
  const port = await freePort()
  const child = spawn(process.execPath, [join(root, 'bin/triad.js'), 'serve', '--only', 'avatar', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: `sqlite:${join(dataDir, 'triad.sqlite')}`, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', openSync(join(dataDir, 'triad.log'), 'a'), 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  // Up to two minutes: a busy shared machine starts it slowly.
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`triad exited with code ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/readyz`)).ok) return { url, pid: child.pid ?? 0, stop: stopper(child) }
    } catch {}
    await sleep(100)
  }
  throw new Error('triad did not become healthy')
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

/** Sends one streaming POST and returns when the first content arrived and when the stream ended. */
async function timeStream(url: string, body: unknown, firstContent: RegExp, options: { agent?: Agent | false } = {}) {
  const payload = JSON.stringify(body)
  const started = performance.now()
  const request = httpRequest(url, {
    method: 'POST',
    agent: options.agent ?? agent,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(payload), authorization: 'Bearer bench' },
  })
  request.end(payload)
  const [response] = (await once(request, 'response')) as [IncomingMessage]
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`)
  let first = Number.NaN
  response.setEncoding('utf8')
  for await (const chunk of response as AsyncIterable<string>) {
    if (Number.isNaN(first) && firstContent.test(chunk)) first = performance.now() - started
  }
  return { ttft: first, total: performance.now() - started }
}

const median = (items: number[]) => {
  const sorted = [...items].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function streamingOverhead() {
  const pieces = 20
  const delayMs = 5
  const model = await startFakeModel(pieces, delayMs)
  const triad = await startAvatar({ AVATAR_LLM_API_KEY: 'bench', AVATAR_LLM_BASE_URL: model.url, AVATAR_LLM_MODEL: 'fake', AVATAR_RATE_LIMIT: '0' })
  try {
    const direct = { url: `${model.url}/chat/completions`, body: { model: 'fake', stream: true, messages: [{ role: 'user', content: 'Hello there' }] } }
    const viaTriad = { url: `${triad.url}/v1/chat/stream`, body: { userText: 'Hello there' } }
    for (let i = 0; i < 20; i++) {
      await timeStream(direct.url, direct.body, /"content"/)
      await timeStream(viaTriad.url, viaTriad.body, /"type":"token"/)
    }
    const samples = { direct: { ttft: [] as number[], total: [] as number[] }, triad: { ttft: [] as number[], total: [] as number[] } }
    const count = Number(values.requests)
    for (let i = 0; i < count; i++) {
      const a = await timeStream(direct.url, direct.body, /"content"/)
      const b = await timeStream(viaTriad.url, viaTriad.body, /"type":"token"/)
      samples.direct.ttft.push(a.ttft)
      samples.direct.total.push(a.total)
      samples.triad.ttft.push(b.ttft)
      samples.triad.total.push(b.total)
    }
    const ttft = { direct: median(samples.direct.ttft), triad: median(samples.triad.ttft) }
    const total = { direct: median(samples.direct.total), triad: median(samples.triad.total) }
    console.log(`Streaming overhead (${count} sequential streams each way, ${pieces} pieces ${delayMs} ms apart, medians)`)
    console.log(
      `  time to first token  direct ${ttft.direct.toFixed(2)} ms   via Triad ${ttft.triad.toFixed(2)} ms   added ${(ttft.triad - ttft.direct).toFixed(2)} ms (target ≤ 2 ms: ${ttft.triad - ttft.direct <= 2 ? 'met' : 'NOT met'})`,
    )
    const added = (total.triad / total.direct - 1) * 100
    console.log(
      `  total stream time    direct ${total.direct.toFixed(1)} ms   via Triad ${total.triad.toFixed(1)} ms   added ${added.toFixed(1)} % (target ≤ 5 %: ${added <= 5 ? 'met' : 'NOT met'})`,
    )
    const command = 'node bench/avatar-chat.ts --parts streaming'
    reportRow({
      benchmark: 'avatar-chat',
      measure: `POST /v1/chat/stream: time to first token added to the model's (fake model, ${pieces} pieces ${delayMs} ms apart, median)`,
      target: '≤ 2 ms',
      figure: `${(ttft.triad - ttft.direct).toFixed(2)} ms (${ttft.triad.toFixed(2)} vs ${ttft.direct.toFixed(2)} ms)`,
      met: verdict(ttft.triad - ttft.direct <= 2),
      command,
    })
    reportRow({
      benchmark: 'avatar-chat',
      measure: 'POST /v1/chat/stream: total stream time added to the model’s',
      target: '≤ 5 %',
      figure: `${added.toFixed(1)} % (${total.triad.toFixed(1)} vs ${total.direct.toFixed(1)} ms)`,
      met: verdict(added <= 5),
      command,
    })
  } finally {
    await Promise.all([model.stop(), triad.stop()])
  }
}

async function chatThroughput() {
  const rounds = Number(values.rounds)
  const durationSeconds = Number(values.duration)
  const baseline = await startBaseline()
  // The limiter stays on (in memory) so its cost is counted, with a budget the load never reaches.
  const triad = await startAvatar({ AVATAR_RATE_LIMIT: '100000000/min' })
  try {
    const body = JSON.stringify({ sessionId: 'bench-session', userText: 'Hello there, how are you today?' })
    const chatLoad = (text: string) => ({ path: '/v1/chat', method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: text, durationSeconds })
    const cpu = { baseline: [] as number[], triad: [] as number[] }
    const result = await compare(
      rounds,
      async () => {
        const measured = await measureWithCpu(baseline, { path: '/', durationSeconds })
        cpu.baseline.push(measured.cpuPerRequestUs)
        return measured
      },
      async () => {
        const measured = await measureWithCpu(triad, chatLoad(body))
        cpu.triad.push(measured.cpuPerRequestUs)
        return measured
      },
    )
    printComparison(`POST /v1/chat (mock, one session, SQLite file) vs bare Fastify (${rounds} rounds × ${durationSeconds} s, 20 connections)`, result, 0.4)
    const withoutSession = await measureWithCpu(triad, chatLoad(JSON.stringify({ userText: 'Hello there, how are you today?' })))
    const health = await measureWithCpu(triad, { path: '/healthz', durationSeconds })
    console.log(
      `  server CPU µs/request (median of rounds): baseline ${median(cpu.baseline).toFixed(1)}, triad ${median(cpu.triad).toFixed(1)}; ` +
        `the same chat without a session (nothing written) ${withoutSession.cpuPerRequestUs.toFixed(1)}; GET /healthz ${health.cpuPerRequestUs.toFixed(1)}`,
    )
    reportRow({
      benchmark: 'avatar-chat',
      measure: 'POST /v1/chat (mock, one session) ÷ bare Fastify hello-world (informational: the same-work yardstick is in bench/yardsticks.ts)',
      target: '—',
      figure: `${result.ratio.toFixed(2)} (CPU ${median(cpu.triad).toFixed(0)}/${median(cpu.baseline).toFixed(0)} µs/req; without a session ${withoutSession.cpuPerRequestUs.toFixed(0)} µs)`,
      met: null,
      command: 'node bench/avatar-chat.ts --parts chat',
    })
    await printPostCeiling(baseline.url, body, { durationSeconds })
  } finally {
    await Promise.all([baseline.stop(), triad.stop()])
  }
}

async function openStreamsMemory(source: 'model' | 'mock') {
  const count = Number(values.streams)
  // Each stream lasts about 30 s: long enough to hold them all open at once.
  const model = source === 'model' ? await startFakeModel(60, 500) : undefined
  const env: Record<string, string> = model
    ? { AVATAR_LLM_API_KEY: 'bench', AVATAR_LLM_BASE_URL: model.url, AVATAR_LLM_MODEL: 'fake', AVATAR_RATE_LIMIT: '0' }
    : { AVATAR_MOCK_TOKEN_DELAY: '2s', AVATAR_RATE_LIMIT: '0' }
  const triad = await startAvatar(env)
  try {
    const idle = rssMb(triad.pid)
    const requests: ReturnType<typeof httpRequest>[] = []
    let firstTokens = 0
    const opened = Array.from({ length: count }, async () => {
      const payload = JSON.stringify({ userText: 'Tell me a long story' })
      const request = httpRequest(`${triad.url}/v1/chat/stream`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      })
      requests.push(request)
      request.on('error', () => {})
      request.end(payload)
      const [response] = (await once(request, 'response')) as [IncomingMessage]
      await once(response, 'data')
      firstTokens++
      response.resume()
    })
    const started = performance.now()
    await Promise.all(opened)
    const openMs = performance.now() - started
    let peak = 0
    for (let i = 0; i < 10; i++) {
      peak = Math.max(peak, rssMb(triad.pid))
      await sleep(500)
    }
    const what = model ? 'fake model streaming 60 pieces 500 ms apart' : 'mock, 2 s between tokens'
    console.log(`Open streams (${count} concurrent, ${what})`)
    console.log(
      `  all ${firstTokens} streams had their first token after ${(openMs / 1000).toFixed(1)} s; Triad RSS idle ${idle.toFixed(0)} MB, peak while open ${peak.toFixed(0)} MB (target < 300 MB: ${peak < 300 ? 'met' : 'NOT met'})`,
    )
    reportRow({
      benchmark: 'avatar-chat',
      measure: `Triad's RSS with ${count} concurrent open streams (${what})`,
      target: '< 300 MB',
      figure: `${peak.toFixed(0)} MB (idle ${idle.toFixed(0)} MB)`,
      met: verdict(peak < 300 && firstTokens === count),
      command: `node bench/avatar-chat.ts --parts ${source === 'model' ? 'memory' : 'memory-mock'}`,
    })
    for (const request of requests) request.destroy()
  } finally {
    await Promise.all([model?.stop(), triad.stop()])
  }
}

/** Opens `/ws?session_id=…` and resolves once it is open. */
async function openSocket(url: string, sessionId: string): Promise<WebSocket> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?session_id=${sessionId}`)
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true })
    socket.addEventListener('error', () => reject(new Error('the WebSocket did not open')), { once: true })
  })
  return socket
}

/** One chat turn over an open socket: time to the first token frame and to `done`. */
function socketTurn(socket: WebSocket, userText: string): Promise<{ ttft: number; total: number; tokens: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    let first = Number.NaN
    let tokens = 0
    const onMessage = (event: MessageEvent) => {
      const frame = JSON.parse(String(event.data)) as { type: string }
      if (frame.type === 'token') {
        tokens++
        if (Number.isNaN(first)) first = performance.now() - started
      } else if (frame.type === 'done' || frame.type === 'error') {
        socket.removeEventListener('message', onMessage)
        if (frame.type === 'error') reject(new Error(`error frame ${String(event.data)}`))
        else resolve({ ttft: first, total: performance.now() - started, tokens })
      }
    }
    socket.addEventListener('message', onMessage)
    socket.send(JSON.stringify({ type: 'chat', userText }))
  })
}

/** SSE and /ws on the same fake model turn: time to first token, CPU per token, RSS of idle sockets. */
async function transports() {
  const pieces = 40
  const model = await startFakeModel(pieces, 1)
  const triad = await startAvatar({ AVATAR_LLM_API_KEY: 'bench', AVATAR_LLM_BASE_URL: model.url, AVATAR_LLM_MODEL: 'fake', AVATAR_RATE_LIMIT: '0' })
  const command = 'node bench/avatar-chat.ts --parts transports'
  const sockets: WebSocket[] = []
  try {
    const count = Number(values.requests)
    const sse = { url: `${triad.url}/v1/chat/stream`, body: { sessionId: 'bench-sse', userText: 'Hello there' } }
    const socket = await openSocket(triad.url, 'bench-ws')
    sockets.push(socket)
    for (let i = 0; i < 10; i++) {
      await timeStream(sse.url, sse.body, /"type":"token"/)
      await socketTurn(socket, 'Hello there')
    }
    const ttft = { sse: [] as number[], ws: [] as number[] }
    const cpu = { sse: 0, ws: 0 }
    let wsTokens = 0
    for (let i = 0; i < count; i++) {
      let before = cpuMicros(triad.pid)
      ttft.sse.push((await timeStream(sse.url, sse.body, /"type":"token"/)).ttft)
      cpu.sse += cpuMicros(triad.pid) - before
      before = cpuMicros(triad.pid)
      const turn = await socketTurn(socket, 'Hello there')
      cpu.ws += cpuMicros(triad.pid) - before
      ttft.ws.push(turn.ttft)
      wsTokens += turn.tokens
    }
    // Both transports stream the same pieces, one token event or frame per piece.
    const perToken = { sse: cpu.sse / (count * pieces), ws: cpu.ws / Math.max(wsTokens, 1) }
    console.log(`SSE vs /ws (${count} sequential turns each, fake model ${pieces} pieces 1 ms apart, medians)`)
    console.log(`  time to first token  SSE ${median(ttft.sse).toFixed(2)} ms   WebSocket ${median(ttft.ws).toFixed(2)} ms`)
    console.log(`  server CPU per token SSE ${perToken.sse.toFixed(1)} µs   WebSocket ${perToken.ws.toFixed(1)} µs (whole turn's CPU ÷ tokens)`)
    reportRow({
      benchmark: 'avatar-chat',
      measure: `Time to first token, SSE (POST /v1/chat/stream, kept-alive connection) vs /ws (open socket), fake model, ${count} sequential turns, median`,
      target: '—',
      figure: `SSE ${median(ttft.sse).toFixed(2)} ms, WebSocket ${median(ttft.ws).toFixed(2)} ms`,
      met: null,
      command,
    })
    reportRow({
      benchmark: 'avatar-chat',
      measure: `Server CPU per streamed token (a turn's CPU ÷ its ${pieces} tokens, session stored), SSE vs /ws`,
      target: '—',
      figure: `SSE ${perToken.sse.toFixed(1)} µs, WebSocket ${perToken.ws.toFixed(1)} µs`,
      met: null,
      command,
    })
    const idleSockets = Number(values.sockets)
    const before = rssMb(triad.pid)
    for (let opened = 0; opened < idleSockets; opened += 50) {
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(50, idleSockets - opened) }, (_, i) => openSocket(triad.url, `bench-idle-${opened + i}`)))))
    }
    await sleep(2000)
    const after = rssMb(triad.pid)
    console.log(`  RSS with ${idleSockets} open idle WebSockets: ${after.toFixed(0)} MB (${before.toFixed(0)} MB before; ${(((after - before) * 1024) / idleSockets).toFixed(1)} KB each)`)
    reportRow({
      benchmark: 'avatar-chat',
      measure: `Triad's RSS with ${idleSockets} open idle WebSockets (/ws)`,
      target: '—',
      figure: `${after.toFixed(0)} MB (${before.toFixed(0)} MB before, ${(((after - before) * 1024) / idleSockets).toFixed(1)} KB per socket)`,
      met: null,
      command,
    })
  } finally {
    for (const socket of sockets) socket.close()
    await Promise.all([model.stop(), triad.stop()])
  }
}

const parts = new Set(String(values.parts).split(','))
if (parts.has('streaming')) await streamingOverhead()
if (parts.has('chat')) await chatThroughput()
if (parts.has('memory')) await openStreamsMemory('model')
if (parts.has('memory-mock')) await openStreamsMemory('mock')
if (parts.has('transports')) await transports()
agent.destroy()
