import OpenAI from 'openai'
import type { LlmPort, LlmRequest } from './llm.port.ts'
import { nodeFetch, takeNodeBody } from './node-fetch.ts'

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

/** Text chunks of an event-stream body, from the node stream when possible, else the web one. */
async function* bodyText(response: Response): AsyncGenerator<string> {
  const node = takeNodeBody(response)
  if (node) {
    node.setEncoding('utf8')
    for await (const chunk of node) yield chunk as string
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
export async function* completionPieces(response: Response): AsyncGenerator<string> {
  let buffer = ''
  let data: string[] = []
  for await (const text of bodyText(response)) {
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

/**
 * The OpenAI-compatible adapter. The caller's signal carries both the client's disconnect and
 * the overall deadline, so the client's own per-attempt timeout is left generous and the
 * deadline covers retries too. Streaming replies are read straight off the socket: the
 * client sends the request (retries, errors, headers) and this adapter parses the event
 * stream, which keeps an open stream small and its first token quick.
 */
export function createOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: options.maxRetries, timeout: 10 * 60_000, fetch: nodeFetch })
  return {
    name: 'openai-compatible',
    async complete(request: LlmRequest) {
      const completion = await client.chat.completions.create({ model: options.model, messages: request.messages, stream: false }, { signal: request.signal })
      const content = completion.choices?.[0]?.message?.content
      if (typeof content !== 'string') throw new Error('the model returned no message content')
      return content
    },
    async *stream(request: LlmRequest) {
      const response = await client.chat.completions
        .create({ model: options.model, messages: request.messages, stream: true }, { signal: request.signal })
        .asResponse()
      try {
        yield* completionPieces(response)
      } finally {
        // Stopping early (client gone, deadline) must hang up on the model.
        takeNodeBody(response)?.destroy()
        if (!response.bodyUsed) await response.body?.cancel().catch(() => {})
      }
    },
  }
}
