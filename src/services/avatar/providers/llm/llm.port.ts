/** One message of a conversation as OpenAI-compatible chat APIs take it. */
export interface LlmMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface LlmRequest {
  messages: LlmMessage[]
  /** Aborted when the reply is no longer wanted (client gone) or the time is up. */
  signal: AbortSignal
}

/**
 * A language model. Implementations return raw model text (markers included); the chat
 * service removes the markers. Both methods reject on any failure (network, HTTP status,
 * abort), which the service answers by falling back to the mock.
 */
export interface LlmPort {
  /** A short name for logs ("openai-compatible", "fake"). */
  readonly name: string
  /** The whole reply at once. */
  complete(request: LlmRequest): Promise<string>
  /** The reply piece by piece, as the model produces it. */
  stream(request: LlmRequest): AsyncIterable<string>
}
