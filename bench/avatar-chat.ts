// Avatar chat benchmarks (issue 4). Usage: node bench/avatar-chat.ts [--rounds 3 --duration 5 --requests 200 --streams 1000
//   --parts streaming,chat,memory]
// 1. Streaming overhead: time to first token and total stream time through POST /v1/chat/stream
//    against calling the fake OpenAI-compatible model directly (sequential requests, medians).
// 2. POST /v1/chat on the mock with a session against the bare-Fastify baseline, same run.
// 3. Resident memory of Triad holding 1,000 concurrent open streams.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, openSync, readFileSync } from 'node:fs'
import { Agent, type IncomingMessage, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { compare, freePort, measureWithCpu, printComparison, printPostCeiling, type RunningServer, startBaseline, stopper } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    requests: { type: 'string', default: '200' },
    streams: { type: 'string', default: '1000' },
    parts: { type: 'string', default: 'streaming,chat,memory,memory-mock' },
  },
})
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
  for (let i = 0; i < 300; i++) {
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
    for (const request of requests) request.destroy()
  } finally {
    await Promise.all([model?.stop(), triad.stop()])
  }
}

const parts = new Set(String(values.parts).split(','))
if (parts.has('streaming')) await streamingOverhead()
if (parts.has('chat')) await chatThroughput()
if (parts.has('memory')) await openStreamsMemory('model')
if (parts.has('memory-mock')) await openStreamsMemory('mock')
agent.destroy()
