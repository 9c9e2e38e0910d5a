import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Cleanup } from '../../../helpers/build-app.ts'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  event: { id: string; type: string; created: string; data: Record<string, unknown>; actor?: unknown }
  /** performance.now() when the request arrived, and when it was answered. */
  arrived: number
  answered?: number
}

/** What the receiver does with a request: answer a status, or hold it (never answer) until released. */
type Behaviour = number | 'hang'

/**
 * A real HTTP receiver on 127.0.0.1: records every request, answers as told (by default 200).
 * `answers` is consumed one per request, then `fallback` applies.
 */
export async function startReceiver(t: Cleanup, options: { delayMs?: number } = {}) {
  const received: Received[] = []
  const answers: Behaviour[] = []
  let fallback: Behaviour = 200
  const held = new Set<ServerResponse>()
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const item: Received = { headers: request.headers, body, event: JSON.parse(body) as Received['event'], arrived: performance.now() }
      received.push(item)
      for (const waiter of waiters.filter((item) => received.length >= item.count)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
      const behaviour = answers.shift() ?? fallback
      if (behaviour === 'hang') {
        held.add(response)
        return
      }
      const answer = () => {
        item.answered = performance.now()
        response.writeHead(behaviour, { 'content-type': 'text/plain' }).end(behaviour < 300 ? 'ok' : 'no')
      }
      if (options.delayMs) setTimeout(answer, options.delayMs)
      else answer()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  t.after(async () => {
    for (const response of held) response.destroy()
    server.closeAllConnections()
    server.close()
  })
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Answers for the next requests, in order. */
    answer(...behaviours: Behaviour[]) {
      answers.push(...behaviours)
    },
    always(behaviour: Behaviour) {
      fallback = behaviour
    },
    /** Resolves once `count` requests in all have arrived. */
    waitFor(count: number): Promise<void> {
      if (received.length >= count) return Promise.resolve()
      return new Promise((resolve) => waiters.push({ count, resolve }))
    },
    /** Answers the held requests with `status`. */
    release(status = 200) {
      for (const response of held) response.writeHead(status).end()
      held.clear()
    },
    types: () => received.map((item) => item.event.type),
  }
}
