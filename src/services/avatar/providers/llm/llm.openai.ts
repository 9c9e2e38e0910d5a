import OpenAI, { APIConnectionError, APIError } from 'openai'
import type { IncomingMessage } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LlmPort, LlmRequest } from './llm.port.ts'
import { nodeFetch, nodeRequest, takeNodeBody, webHeaders } from './node-fetch.ts'

export interface OpenAiLlmOptions {
  apiKey: string
  /** Any OpenAI-compatible endpoint: OpenAI, DeepSeek, Ollama, vLLM, LM Studio… */
  baseUrl?: string
  model: string
  maxRetries: number
}

interface ChunkLike {
  choices?: { delta?: { content?: string | null } }[]
  error?: { message?: string }
}

/**
 * Text chunks of a node response body. Not destroyed when the parser stops reading at [DONE]:
 * the caller decides whether the rest is read (the connection then goes back to the keep-alive
 * pool) or the connection is cut.
 */
async function* nodeText(node: IncomingMessage): AsyncGenerator<string> {
  node.setEncoding('utf8')
  for await (const chunk of node.iterator({ destroyOnReturn: false })) yield chunk as string
}

/** Text chunks of an event-stream body, from the node stream when possible, else the web one. */
async function* bodyText(response: Response): AsyncGenerator<string> {
  const node = takeNodeBody(response)
  if (node) {
    yield* nodeText(node)
    return
  }
  if (!response.body) return
  const decoder = new TextDecoder()
  for await (const bytes of response.body) yield decoder.decode(bytes, { stream: true })
}

/**
 * The content pieces of a chat-completions event stream: `data:` lines carry JSON chunks,
 * a blank line ends an event, `data: [DONE]` ends the stream. A chunk that carries `error`
 * (some compatible servers report failures mid-stream that way) is a failure.
 */
export function completionPieces(response: Response): AsyncGenerator<string> {
  return eventPieces(bodyText(response))
}

async function* eventPieces(body: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = ''
  let data: string[] = []
  for await (const text of body) {
    buffer += text
    let newline = buffer.indexOf('\n')
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '')
      buffer = buffer.slice(newline + 1)
      newline = buffer.indexOf('\n')
      if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
        continue
      }
      if (line !== '' || data.length === 0) continue
      const payload = data.join('\n')
      data = []
      if (payload === '[DONE]') return
      const chunk = JSON.parse(payload) as ChunkLike
      if (chunk.error) throw new Error(`the model reported an error: ${chunk.error.message ?? 'unknown'}`)
      const piece = chunk.choices?.[0]?.delta?.content
      if (piece) yield piece
    }
  }
}

/** A streamed reply being read: its text, and how to let go of its connection once done with it. */
interface OpenedStream {
  text: AsyncIterable<string>
  /**
   * A reply read to its [DONE] has at most the end of its body left: reading that returns the
   * connection to the keep-alive pool, so the next turn's request does not wait for a new one.
   * Stopping early (client gone, deadline, a failure) must hang up on the model.
   */
  release(complete: boolean): Promise<void>
}

function nodeStream(node: IncomingMessage): OpenedStream {
  return {
    text: nodeText(node),
    release: async (complete) => {
      if (complete) node.resume()
      else node.destroy()
    },
  }
}

function responseStream(response: Response): OpenedStream {
  return {
    text: bodyText(response),
    release: async (complete) => {
      const node = takeNodeBody(response)
      if (node) return nodeStream(node).release(complete)
      if (!response.bodyUsed) await response.body?.cancel().catch(() => {})
    },
  }
}

/** Whether the SDK retries a response with this status (its `shouldRetry`): as the server says, else 408, 409, 429 and 5xx. */
function retryable(status: number, headers: Headers): boolean {
  const told = headers.get('x-should-retry')
  if (told === 'true' || told === 'false') return told === 'true'
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/** How long the SDK waits before its first retry: what Retry-After-Ms or Retry-After ask, else half a second less up to a quarter. */
function firstRetryDelayMs(headers?: Headers): number {
  const millis = Number.parseFloat(headers?.get('retry-after-ms') ?? '')
  if (Number.isFinite(millis)) return millis
  const after = headers?.get('retry-after')
  if (after) {
    const seconds = Number.parseFloat(after)
    const wait = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000
    if (Number.isFinite(wait)) return wait
  }
  return 500 * (1 - Math.random() * 0.25)
}

/** The most of an error response's body that is read, for its message. */
const MAX_ERROR_BODY = 64 * 1024

/** An error response's body as text, cut at MAX_ERROR_BODY (the connection is then cut too). */
async function errorBody(node: IncomingMessage): Promise<string> {
  let text = ''
  node.setEncoding('utf8')
  for await (const chunk of node) {
    text += chunk
    if (text.length > MAX_ERROR_BODY) return text.slice(0, MAX_ERROR_BODY)
  }
  return text
}

/**
 * The OpenAI-compatible adapter. The caller's signal carries both the client's disconnect and
 * the overall deadline, so the client's own per-attempt timeout is left generous and the
 * deadline covers retries too. Streaming replies are read straight off the socket, and this
 * adapter parses the event stream, which keeps an open stream small and its first token quick.
 *
 * A streamed call's first attempt goes the short way: the request the client would send (its
 * headers, built once by the client itself, and the same body and URL) over node:http, without
 * the client's request and response machinery, which cost about as much as the rest of the
 * path to the first token (bench/README.md). Anything but a 2xx answer is then the client's to
 * handle as it always was: after the wait it would have made, it retries with one retry
 * fewer, and with none left the error is the one it would have raised.
 */
export function createOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: options.maxRetries, timeout: 10 * 60_000, fetch: nodeFetch })
  const completionsUrl = new URL(client.buildURL('/chat/completions', undefined))
  let streamHeaders: Promise<Record<string, string>> | undefined

  /** The headers of a streamed completion's first attempt: the client's, which hold nothing particular to one request. */
  function firstAttemptHeaders(): Promise<Record<string, string>> {
    streamHeaders ??= client.buildRequest({ method: 'post', path: '/chat/completions', body: {}, stream: true }).then(({ req }) => {
      const headers: Record<string, string> = {}
      new Headers(req.headers).forEach((value, name) => {
        // A per-request key, were the client ever to send one, must not be shared by every request.
        if (name !== 'idempotency-key') headers[name] = value
      })
      return headers
    })
    return streamHeaders
  }

  /** The rest of a streamed call the SDK's way, with `maxRetries` retries. */
  async function throughClient(request: LlmRequest, maxRetries: number): Promise<OpenedStream> {
    const response = await client.chat.completions
      .create({ model: options.model, messages: request.messages, stream: true }, { signal: request.signal, maxRetries })
      .asResponse()
    return responseStream(response)
  }

  async function openStream(request: LlmRequest): Promise<OpenedStream> {
    const { signal } = request
    const body = JSON.stringify({ model: options.model, messages: request.messages, stream: true })
    let node: IncomingMessage
    try {
      node = await nodeRequest(completionsUrl, { method: 'POST', headers: await firstAttemptHeaders(), body, signal })
    } catch (error) {
      if (signal.aborted || options.maxRetries === 0) throw signal.aborted ? error : new APIConnectionError({ cause: error instanceof Error ? error : undefined })
      await sleep(firstRetryDelayMs(), undefined, { signal })
      return throughClient(request, options.maxRetries - 1)
    }
    const status = node.statusCode ?? 500
    if (status >= 200 && status < 300) return nodeStream(node)
    const headers = webHeaders(node)
    if (options.maxRetries > 0 && retryable(status, headers)) {
      node.resume()
      await sleep(firstRetryDelayMs(headers), undefined, { signal })
      return throughClient(request, options.maxRetries - 1)
    }
    const text = await errorBody(node)
    let json: object | undefined
    try {
      json = JSON.parse(text) as object
    } catch {}
    throw APIError.generate(status, json, json ? undefined : text, headers)
  }

  return {
    name: 'openai-compatible',
    async complete(request: LlmRequest) {
      const completion = await client.chat.completions.create({ model: options.model, messages: request.messages, stream: false }, { signal: request.signal })
      const content = completion.choices?.[0]?.message?.content
      if (typeof content !== 'string') throw new Error('the model returned no message content')
      return content
    },
    async *stream(request: LlmRequest) {
      const opened = await openStream(request)
      let complete = false
      try {
        yield* eventPieces(opened.text)
        complete = true
      } finally {
        await opened.release(complete)
      }
    },
  }
}
