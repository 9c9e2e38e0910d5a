export { createOpenAiLlm } from './llm.openai.ts'
export type { LlmMessage, LlmPort, LlmRequest } from './llm.port.ts'
