import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** How the fake answers the next requests; change it between requests with `server.script`. */
export interface FakeScript {
  /** The reply, in the pieces a streaming response sends (joined for a non-streaming one). */
  pieces: string[]
  /** Answer with this HTTP status and an OpenAI-style error body instead. */
  status?: number
  /** Only the first `failTimes` requests get `status`; later ones succeed. */
  failTimes?: number
  /** With `status`: a `Retry-After-Ms` header, the wait a client should make before retrying. */
  retryAfterMs?: number
  /** Wait this long before answering at all. */
  firstDelayMs?: number
  /** Wait this long between streamed pieces. */
  delayMs?: number
  /** Streaming only: drop the connection after this many pieces. */
  dropAfter?: number
  /** Answer 200 with a body that is not JSON. */
  garbage?: boolean
}

export interface ReceivedRequest {
  path: string
  authorization?: string
  body: { model: string; stream?: boolean; messages: { role: string; content: string }[] }
}

export interface FakeOpenAiServer {
  /** The base URL to configure (AVATAR_LLM_BASE_URL), ending in /v1. */
  baseUrl: string
  script: FakeScript
  requests: ReceivedRequest[]
  /** Requests whose client went away before the response was complete. */
  aborted: number
  /** TCP connections accepted so far (a client that keeps connections alive opens few). */
  connections: number
  close(): Promise<void>
}

function chunk(content: string | null, finish: string | null) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1767225600,
    model: 'fake-model',
    choices: [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finish }],
  }
}

/**
 * A small OpenAI-compatible chat-completions server on 127.0.0.1, streaming (SSE, as OpenAI
 * sends it) and non-streaming, scriptable to be slow, fail, drop the connection or return
 * nonsense. Used by the provider tests and by the streaming benchmark.
 */
export async function startFakeOpenAi(
  script: FakeScript = { pieces: ['[emotion:happy][action:wave] ', 'Hello', ' from', ' the', ' model!'] },
): Promise<FakeOpenAiServer> {
  // Counted per script, so a new script starts with a clean slate.
  const failures = new WeakMap<FakeScript, number>()
  const state: FakeOpenAiServer = {
    baseUrl: '',
    script,
    requests: [],
    aborted: 0,
    connections: 0,
    close: async () => {},
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    let raw = ''
    for await (const part of request) raw += part
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }))
      return
    }
    const body = JSON.parse(raw) as ReceivedRequest['body']
    state.requests.push({ path: request.url, authorization: request.headers.authorization, body })
    const current = state.script
    let finished = false
    response.on('close', () => {
      if (!finished) state.aborted++
    })
    if (current.firstDelayMs) await sleep(current.firstDelayMs)
    if (response.destroyed) return
    if (current.status && (current.failTimes === undefined || (failures.get(current) ?? 0) < current.failTimes)) {
      failures.set(current, (failures.get(current) ?? 0) + 1)
      finished = true
      response.writeHead(current.status, {
        'content-type': 'application/json',
        ...(current.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(current.retryAfterMs) }),
      })
      response.end(JSON.stringify({ error: { message: `fake failure ${current.status}`, type: 'server_error', code: null } }))
      return
    }
    if (current.garbage) {
      finished = true
      response.writeHead(200, { 'content-type': 'application/json' }).end('<html>gateway hiccup</html>')
      return
    }
    if (!body.stream) {
      finished = true
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 1767225600,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: current.pieces.join('') }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      )
      return
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    for (let index = 0; index < current.pieces.length; index++) {
      if (index > 0 && current.delayMs) await sleep(current.delayMs)
      if (current.dropAfter === index) {
        response.destroy()
        return
      }
      if (response.destroyed) return
      response.write(`data: ${JSON.stringify(chunk(current.pieces[index], null))}\n\n`)
    }
    response.write(`data: ${JSON.stringify(chunk(null, 'stop'))}\n\n`)
    response.write('data: [DONE]\n\n')
    finished = true
    response.end()
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy())
  })
  server.on('connection', () => state.connections++)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  state.baseUrl = `http://127.0.0.1:${port}/v1`
  state.close = async () => {
    server.closeAllConnections()
    server.close()
    await once(server, 'close')
  }
  return state
}
