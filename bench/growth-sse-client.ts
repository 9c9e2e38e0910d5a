// Holds idle SSE streams open for bench/growth.ts, in a process of its own (the benchmark
// spreads 10 000 streams over several, so that no one process needs 10 000 sockets and the
// measuring process stays free). Usage: node bench/growth-sse-client.ts <url> <count>
// Opens `count` POST /v1/chat/stream requests, at most 100 opening at a time, prints
// `ready <count> <ms>` once each has had its first bytes of body, then holds them until SIGTERM.
import { once } from 'node:events'
import { type IncomingMessage, request as httpRequest } from 'node:http'

const [url, countText] = process.argv.slice(2)
const count = Number(countText)
if (!url || !Number.isSafeInteger(count)) throw new Error('usage: growth-sse-client.ts <url> <count>')

const payload = JSON.stringify({ userText: 'Tell me a long story' })
const held: IncomingMessage[] = []
let failed = 0

async function open(): Promise<void> {
  const request = httpRequest(`${url}/v1/chat/stream`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), accept: 'text/event-stream' },
  })
  request.on('error', () => failed++)
  request.end(payload)
  const [response] = (await once(request, 'response')) as [IncomingMessage]
  if (response.statusCode !== 200) throw new Error(`the stream answered ${response.statusCode}`)
  await once(response, 'data')
  // Heartbeats keep coming; read and drop them.
  response.resume()
  held.push(response)
}

const started = performance.now()
let next = 0
await Promise.all(
  Array.from({ length: Math.min(100, count) }, async () => {
    while (next < count) {
      next++
      await open()
    }
  }),
)
process.stdout.write(`ready ${held.length} ${(performance.now() - started).toFixed(0)} ${failed}\n`)
process.on('SIGTERM', () => process.exit(0))
setInterval(() => {}, 60_000)
