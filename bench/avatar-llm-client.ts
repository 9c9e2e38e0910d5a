// The OpenAI-compatible adapter's own cost per streamed token (issue 15): Triad's adapter
// (`providers/llm/llm.openai.ts`: the `openai` client sends the request, the reply is read
// straight off the node:http socket by its own event-stream parser) against the `openai` SDK's
// own streaming (global fetch, the SDK's parser), in one process, same run, alternating rounds.
// Usage: node bench/avatar-llm-client.ts [--rounds 5 --streams 200 --pieces 60 --concurrency 10 --delay 1]
// The fake model (bench/avatar-chat-fake-llm.ts) runs in its own process and sends its pieces
// `--delay` ms apart (each in its own packet, as a model's tokens arrive; 0 packs them), so the
// CPU this process spends is the client's: request, reading, parsing, iteration.
import OpenAI from 'openai'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { createOpenAiLlm } from '../src/services/avatar/providers/llm/llm.openai.ts'
import type { LlmPort } from '../src/services/avatar/providers/llm/llm.port.ts'
import { reportRow, smoke, stopper } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    streams: { type: 'string', default: '200' },
    pieces: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '10' },
    delay: { type: 'string', default: '1' },
    smoke: { type: 'boolean', default: false },
  },
})
if (smoke) Object.assign(values, { rounds: '1', streams: '20' })
const root = new URL('..', import.meta.url).pathname
const rounds = Number(values.rounds)
const streams = Number(values.streams)
const pieces = Number(values.pieces)
const concurrency = Number(values.concurrency)

/** The adapter as the SDK alone would write it: chat.completions.create with stream: true. */
function sdkStreaming(options: { apiKey: string; baseUrl: string; model: string; maxRetries: number; timeoutMs: number }): LlmPort {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: options.maxRetries, timeout: options.timeoutMs })
  return {
    name: 'sdk',
    complete: () => Promise.reject(new Error('not measured')),
    async *stream(request) {
      const stream = await client.chat.completions.create({ model: options.model, messages: request.messages, stream: true }, { signal: request.signal })
      for await (const chunk of stream) {
        const piece = chunk.choices[0]?.delta?.content
        if (piece) yield piece
      }
      request.signal.throwIfAborted()
    },
  }
}

const child = spawn(process.execPath, [join(root, 'bench/avatar-chat-fake-llm.ts'), String(pieces), String(values.delay)], { stdio: ['ignore', 'pipe', 'inherit'] })
let baseUrl = ''
if (child.stdout) {
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith('http')) {
      baseUrl = line.trim()
      break
    }
  }
}
const stop = stopper(child)

const options = { apiKey: 'bench', baseUrl, model: 'fake', maxRetries: 0, timeoutMs: 30_000 }
const clients: Record<string, LlmPort> = { triad: createOpenAiLlm(options), sdk: sdkStreaming(options) }
const messages = [{ role: 'user' as const, content: 'Hello there' }]

/** Streams `streams` replies, `concurrency` at a time; returns this process's CPU µs per piece. */
async function run(llm: LlmPort): Promise<number> {
  let next = 0
  let received = 0
  const cpu = process.cpuUsage()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < streams) {
        for await (const piece of llm.stream({ messages, signal: new AbortController().signal })) if (piece) received++
      }
    }),
  )
  const used = process.cpuUsage(cpu)
  if (received !== streams * pieces) throw new Error(`received ${received} pieces, expected ${streams * pieces}`)
  return (used.user + used.system) / received
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]

try {
  for (const llm of Object.values(clients)) await run(llm) // warm-up
  const samples = { triad: [] as number[], sdk: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    samples.triad.push(await run(clients.triad))
    samples.sdk.push(await run(clients.sdk))
    console.log(`  round ${round + 1}: triad ${samples.triad.at(-1)?.toFixed(1)}   sdk ${samples.sdk.at(-1)?.toFixed(1)} µs CPU/token`)
  }
  const triad = median(samples.triad)
  const sdk = median(samples.sdk)
  console.log(`OpenAI-compatible adapter: ${streams} streams × ${pieces} tokens ${values.delay} ms apart, ${concurrency} at a time, ${rounds} rounds (client CPU per streamed token, medians)`)
  console.log(`  Triad's (node:http + own parser) ${triad.toFixed(1)} µs   openai SDK streaming ${sdk.toFixed(1)} µs   SDK / Triad's ${(sdk / triad).toFixed(2)}`)
  reportRow({
    benchmark: 'avatar-llm-client',
    measure: `OpenAI-compatible adapter, client CPU per streamed token (${concurrency} streams at a time): Triad's (node:http + own parser) vs the openai SDK's streaming`,
    target: '—',
    figure: `${triad.toFixed(1)} vs ${sdk.toFixed(1)} µs (SDK ÷ Triad's ${(sdk / triad).toFixed(2)})`,
    met: null,
    command: 'node bench/avatar-llm-client.ts',
  })
} finally {
  await stop()
}
