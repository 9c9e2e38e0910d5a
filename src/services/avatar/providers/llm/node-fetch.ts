import http, { Agent as HttpAgent, type IncomingMessage } from 'node:http'
import https, { Agent as HttpsAgent } from 'node:https'

const httpAgent = new HttpAgent({ keepAlive: true })
const httpsAgent = new HttpsAgent({ keepAlive: true })

interface NodeBody {
  stream: IncomingMessage
  /** True once the web body started reading; the node stream is then no longer free. */
  attached: boolean
  claimed: boolean
}

const nodeBodies = new WeakMap<Response, NodeBody>()

/**
 * The node:http stream behind a Response made by `nodeFetch`, for a caller that reads it
 * directly (skipping the web-stream layer); undefined when the web body is already in use.
 */
export function takeNodeBody(response: Response): IncomingMessage | undefined {
  const body = nodeBodies.get(response)
  if (!body || body.attached) return undefined
  body.claimed = true
  return body.stream
}

/** A web stream over a node stream that attaches to it only when first read. */
function lazyWebBody(body: NodeBody): ReadableStream<Uint8Array> {
  const source = body.stream
  let finished = false
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (body.attached) {
          source.resume()
          return
        }
        if (body.claimed) throw new Error('the body is already read as a node stream')
        body.attached = true
        source.on('data', (chunk: Buffer) => {
          if (finished) return
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
          if ((controller.desiredSize ?? 1) <= 0) source.pause()
        })
        source.once('end', () => {
          if (finished) return
          finished = true
          controller.close()
        })
        source.once('error', (error) => {
          if (finished) return
          finished = true
          controller.error(error)
        })
      },
      cancel() {
        finished = true
        // Once taken as a node stream, the stream is its taker's to end.
        if (!body.claimed) source.destroy()
      },
    },
    // Pulled only when read: with the default high-water mark of 1 the stream pulls as soon as
    // it is made, which attached it to the node stream before anyone read, so `takeNodeBody`
    // always failed and every model stream went through the web stream and a TextDecoder.
    { highWaterMark: 0 },
  )
}

function plainHeaders(headers: RequestInit['headers']): Record<string, string> {
  if (headers === undefined) return {}
  if (headers instanceof Headers) {
    const plain: Record<string, string> = {}
    headers.forEach((value, name) => {
      plain[name] = value
    })
    return plain
  }
  return Object.fromEntries(new Headers(headers))
}

/** A request as `nodeRequest` sends it: a text or byte body, plain headers. */
export interface NodeRequestInit {
  method: string
  headers: Record<string, string>
  body?: string | Uint8Array
  signal?: AbortSignal
}

/**
 * Sends a request over node:http (kept-alive connections) and resolves with the response once
 * its headers are in, whatever its status. Aborting `signal` cuts the request or the response
 * being read; the response's listener goes once it closes.
 */
export async function nodeRequest(url: URL, init: NodeRequestInit): Promise<IncomingMessage> {
  const { signal } = init
  signal?.throwIfAborted()
  const secure = url.protocol === 'https:'
  // Looked up at each call, on the module object: tracing (OpenTelemetry's HTTP instrumentation)
  // wraps it there, whenever it starts.
  const request = (secure ? https.request : http.request)(url, {
    method: init.method,
    headers: init.headers,
    agent: secure ? httpsAgent : httpAgent,
  })
  const onAbort = () => request.destroy(signal?.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError'))
  signal?.addEventListener('abort', onAbort, { once: true })
  let response: IncomingMessage
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      request.once('response', resolve)
      request.once('error', reject)
      request.end(init.body)
    })
  } catch (error) {
    signal?.removeEventListener('abort', onAbort)
    throw signal?.aborted ? signal.reason : error
  }
  response.once('close', () => signal?.removeEventListener('abort', onAbort))
  // Errors after the headers surface through whoever reads the body; unread, they must not crash.
  response.on('error', () => {})
  return response
}

/** A node response's headers as web Headers. */
export function webHeaders(response: IncomingMessage): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else if (value !== undefined) headers.set(name, value)
  }
  return headers
}

/**
 * A `fetch` for the `openai` client built on node:http instead of the global (undici) fetch:
 * an open streaming reply costs much less memory this way, which bounds how many avatars one
 * instance keeps talking at once (bench/avatar-chat.ts). It implements what the client uses:
 * method, headers, a text or byte body, an AbortSignal and a streaming Response, whose body can
 * also be read as the node stream itself (`takeNodeBody`).
 */
export async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body
  if (input instanceof Request || (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array))) {
    // The client sends JSON text to a URL; anything else goes to the standard fetch.
    return fetch(input, init)
  }
  const response = await nodeRequest(new URL(input), { method: init.method ?? 'GET', headers: plainHeaders(init.headers), body: body ?? undefined, signal: init.signal ?? undefined })
  const headers = webHeaders(response)
  const status = response.statusCode ?? 500
  if (status === 204 || status === 304 || init.method === 'HEAD') {
    response.resume()
    return new Response(null, { status, statusText: response.statusMessage, headers })
  }
  const nodeBody: NodeBody = { stream: response, attached: false, claimed: false }
  const result = new Response(lazyWebBody(nodeBody), { status, statusText: response.statusMessage, headers })
  nodeBodies.set(result, nodeBody)
  return result
}
