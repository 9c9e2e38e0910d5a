import type { FastifyReply, FastifyRequest } from 'fastify'

/** One Server-Sent Event. `data` may span lines; `event` and `id` may not. */
export interface SseEvent {
  data: string
  event?: string
  id?: string
  /** Reconnection delay the client should use, in milliseconds. */
  retry?: number
}

export interface SseStream {
  /**
   * Writes one event. Resolves once the socket accepted it (after a `drain` when the client
   * reads slowly), so a producer that awaits it holds at most one event in memory per stream.
   * Resolves without writing when the stream is already closed.
   */
  send(event: SseEvent): Promise<void>
  /** Writes a comment line (`: text`), which clients ignore; keeps idle connections open. */
  comment(text: string): Promise<void>
  /** Ends the response. Safe to call more than once. */
  close(): void
  /** Aborted when the client goes away before `close()`: pass it to whatever produces the events. */
  readonly signal: AbortSignal
  readonly closed: boolean
}

export interface SseOptions {
  /** Interval of heartbeat comments in milliseconds; 0 turns them off. */
  heartbeatMs?: number
  /** Extra response headers (they win over the reply's headers, not over the SSE ones). */
  headers?: Record<string, string>
}

const LINE_BREAK = /\r\n|\r|\n/

/**
 * The headers that make proxies and clients pass each event on at once: no caching, no
 * transformation (compression buffers), and nginx's `X-Accel-Buffering: no`.
 */
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const

function assertSingleLine(field: string, value: string): void {
  // A CR or LF would end the field early and let the rest be read as another field or event.
  if (/[\r\n]/.test(value)) throw new TypeError(`SSE ${field} must not contain CR or LF`)
}

/** Serialises one event: every line of `data` gets its own `data:` field, as the SSE spec reads them back joined by LF. */
export function formatSseEvent(event: SseEvent): string {
  let text = ''
  if (event.event !== undefined) {
    assertSingleLine('event', event.event)
    text += `event: ${event.event}\n`
  }
  if (event.id !== undefined) {
    assertSingleLine('id', event.id)
    if (event.id.includes('\0')) throw new TypeError('SSE id must not contain NUL')
    text += `id: ${event.id}\n`
  }
  if (event.retry !== undefined) {
    if (!Number.isInteger(event.retry) || event.retry < 0) throw new TypeError('SSE retry must be a non-negative integer')
    text += `retry: ${event.retry}\n`
  }
  for (const line of event.data.split(LINE_BREAK)) text += `data: ${line}\n`
  return `${text}\n`
}

/** Serialises a comment; each line becomes its own comment line. */
export function formatSseComment(text: string): string {
  return `${text
    .split(LINE_BREAK)
    .map((line) => `: ${line}`)
    .join('\n')}\n\n`
}

/**
 * Takes over the response of `reply` and turns it into an event stream. The reply's headers
 * set so far (request id, CORS, rate-limit counters) are kept. Call this only after every
 * check that may fail with an ordinary error response: from here on the status is 200.
 */
export function openSseStream(request: FastifyRequest, reply: FastifyReply, options: SseOptions = {}): SseStream {
  const response = reply.raw
  const controller = new AbortController()
  let heartbeat: NodeJS.Timeout | undefined

  reply.hijack()
  const inherited: Record<string, string | number | string[]> = {}
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && name !== 'content-length') inherited[name] = value
  }
  response.writeHead(200, { ...inherited, ...options.headers, ...SSE_HEADERS })
  // Tokens are small writes; Nagle's algorithm would hold them back waiting for an ACK.
  const socket = request.raw.socket as { setNoDelay?: (noDelay: boolean) => void } | undefined
  if (typeof socket?.setNoDelay === 'function') socket.setNoDelay(true)
  // The headers go out with the first event when one is written in this turn of the event
  // loop (one packet, one system call), else on their own at its end: a caller that starts a
  // request of its own first (the model call of a chat stream) has it on the wire before this
  // response's first write instead of after it.
  let written = false
  setImmediate(() => {
    if (!written && !stream.closed && !response.destroyed) response.flushHeaders()
  })

  const finish = () => {
    if (heartbeat) clearInterval(heartbeat)
    heartbeat = undefined
  }

  // `close` fires both when we end the response and when the client goes away; only the
  // latter is an abort.
  response.on('close', () => {
    finish()
    // Fires after `stream` below exists: only then can the response close.
    if (!stream.closed) {
      stream.closed = true
      controller.abort(new Error('client disconnected'))
    }
  })

  const write = (chunk: string): Promise<void> => {
    if (stream.closed || response.destroyed) return Promise.resolve()
    written = true
    if (response.write(chunk)) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        response.off('drain', done)
        response.off('close', done)
        resolve()
      }
      response.on('drain', done)
      response.on('close', done)
    })
  }

  if (options.heartbeatMs && options.heartbeatMs > 0) {
    heartbeat = setInterval(() => void write(formatSseComment('ping')), options.heartbeatMs)
    heartbeat.unref()
  }

  const stream: SseStream & { closed: boolean } = {
    send: (event) => write(formatSseEvent(event)),
    comment: (text) => write(formatSseComment(text)),
    close: () => {
      if (stream.closed) return
      stream.closed = true
      finish()
      response.end()
    },
    signal: controller.signal,
    // A plain property, not a getter: a getter closure per stream gives each stream object its
    // own hidden class (see "Garbage collector flag" in docs/decisions.md).
    closed: false,
  }
  return stream
}
