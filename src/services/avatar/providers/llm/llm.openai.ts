import OpenAI from 'openai'
import type { LlmPort, LlmRequest } from './llm.port.ts'

export interface OpenAiLlmOptions {
  apiKey: string
  /** Any OpenAI-compatible endpoint: OpenAI, DeepSeek, Ollama, vLLM, LM Studio… */
  baseUrl?: string
  model: string
  maxRetries: number
}

/**
 * The OpenAI-compatible adapter. The caller's signal carries both the client's disconnect and
 * the overall deadline, so the client's own per-attempt timeout is left generous and the
 * deadline covers retries too.
 */
export function createOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: options.maxRetries, timeout: 10 * 60_000 })
  return {
    name: 'openai-compatible',
    async complete(request: LlmRequest) {
      const completion = await client.chat.completions.create({ model: options.model, messages: request.messages, stream: false }, { signal: request.signal })
      const content = completion.choices?.[0]?.message?.content
      if (typeof content !== 'string') throw new Error('the model returned no message content')
      return content
    },
    async *stream(request: LlmRequest) {
      const stream = await client.chat.completions.create({ model: options.model, messages: request.messages, stream: true }, { signal: request.signal })
      for await (const chunk of stream) {
        const piece = chunk.choices?.[0]?.delta?.content
        if (piece) yield piece
      }
    },
  }
}
