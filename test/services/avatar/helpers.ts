import type { FastifyInstance } from 'fastify'
import { once } from 'node:events'
import { type IncomingMessage, request as httpRequest } from 'node:http'
import { type Cleanup, type TestApp, type TestAppOptions, buildTestApp } from '../../helpers/build-app.ts'
import type { LlmPort } from '../../../src/services/avatar/providers/llm/llm.port.ts'

/** An app serving only the avatar API; no rate limit and no pacing of mock tokens unless `env` says so. */
export async function buildAvatarApp(t: Cleanup, options: TestAppOptions & { llm?: LlmPort } = {}): Promise<TestApp> {
  const { llm, ...rest } = options
  return buildTestApp(t, {
    ...rest,
    services: ['avatar'],
    env: { AVATAR_RATE_LIMIT: '0', AVATAR_MOCK_TOKEN_DELAY: '0ms', ...options.env },
    deps: llm ? { avatar: { llm } } : rest.deps,
  })
}

export async function chat(app: FastifyInstance, body: unknown) {
  const response = await app.inject({ method: 'POST', url: '/v1/chat', payload: body as object })
  return { status: response.statusCode, body: response.json(), headers: response.headers }
}

export interface SseEventData {
  type: string
  content?: string
  replyText?: string
  emotion?: string
  action?: string
  message?: string
}

/** Parses an event-stream body into the JSON of its `data` fields; comments are skipped. */
export function parseSse(text: string): SseEventData[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as SseEventData)
}

export interface StreamEvent extends SseEventData {
  /** Milliseconds since the request was sent. */
  at: number
}

/**
 * Posts to /v1/chat/stream over a real socket (a fresh connection each time, as a browser's
 * EventSource polyfill would) and reads events as they arrive. `stopAfter` disconnects the
 * client after that many events.
 */
export async function readStream(baseUrl: string, body: unknown, options: { stopAfter?: number; headers?: Record<string, string> } = {}) {
  const started = performance.now()
  const payload = JSON.stringify(body)
  const request = httpRequest(`${baseUrl}/v1/chat/stream`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(payload), ...options.headers },
  })
  request.end(payload)
  const [response] = (await once(request, 'response')) as [IncomingMessage]
  const headers = new Headers()
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value)
  const events: StreamEvent[] = []
  let raw = ''
  let buffer = ''
  response.setEncoding('utf8')
  try {
    for await (const text of response as AsyncIterable<string>) {
      raw += text
      if (!headers.get('content-type')?.startsWith('text/event-stream')) continue
      buffer += text
      let end = buffer.indexOf('\n\n')
      while (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        for (const event of parseSse(`${block}\n\n`)) events.push({ ...event, at: performance.now() - started })
        end = buffer.indexOf('\n\n')
      }
      if (options.stopAfter !== undefined && events.length >= options.stopAfter) {
        request.destroy()
        break
      }
    }
  } catch (error) {
    if (!request.destroyed) throw error
  }
  return { response: { status: response.statusCode ?? 0, headers }, events, raw }
}

export type MultipartFields = Record<string, string | { bytes: Uint8Array; name: string; type: string }>

/** A multipart body as a browser's FormData makes it. */
export async function multipartForm(fields: MultipartFields) {
  const data = new FormData()
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === 'string') data.append(key, value)
    else data.append(key, new Blob([value.bytes as Uint8Array<ArrayBuffer>], { type: value.type }), value.name)
  }
  const request = new Request('http://localhost/', { method: 'POST', body: data })
  return { payload: Buffer.from(await request.arrayBuffer()), headers: { 'content-type': request.headers.get('content-type') ?? '' } }
}

/** POST /v1/asr with a multipart form of `fields`. */
export async function postAsr(app: FastifyInstance, fields: MultipartFields) {
  return app.inject({ method: 'POST', url: '/v1/asr', ...(await multipartForm(fields)) })
}

/** A listener on GET /v1/session/{id}/events over a real socket, as a page's EventSource. */
export interface EventsListener {
  /** The next event's data, parsed (fails after `ms`). */
  next(ms?: number): Promise<Record<string, unknown>>
  close(): void
}

/** Opens the operator event stream of a session; resolves once its headers have arrived (it is then subscribed). */
export async function listenToEvents(baseUrl: string, sessionId: string): Promise<EventsListener> {
  const request = httpRequest(`${baseUrl}/v1/session/${encodeURIComponent(sessionId)}/events`, { agent: false, headers: { accept: 'text/event-stream' } })
  request.end()
  const [response] = (await once(request, 'response')) as [IncomingMessage]
  if (response.statusCode !== 200) throw new Error(`events answered ${response.statusCode}`)
  const queue: Array<Record<string, unknown>> = []
  const waiting: Array<(event: Record<string, unknown>) => void> = []
  let buffer = ''
  response.setEncoding('utf8')
  response.on('data', (text: string) => {
    buffer += text
    let end = buffer.indexOf('\n\n')
    while (end >= 0) {
      const [event] = parseSse(buffer.slice(0, end + 2))
      buffer = buffer.slice(end + 2)
      if (event) {
        const resolve = waiting.shift()
        if (resolve) resolve(event as unknown as Record<string, unknown>)
        else queue.push(event as unknown as Record<string, unknown>)
      }
      end = buffer.indexOf('\n\n')
    }
  })
  response.on('error', () => {})
  return {
    next(ms = 5000) {
      const ready = queue.shift()
      if (ready) return Promise.resolve(ready)
      return new Promise((resolve, reject) => {
        const waiter = (event: Record<string, unknown>) => {
          clearTimeout(timer)
          resolve(event)
        }
        // A wait that timed out takes no later event away from the next one.
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1)
          reject(new Error(`no event within ${ms} ms`))
        }, ms)
        waiting.push(waiter)
      })
    },
    close: () => request.destroy(),
  }
}
