export { createOpenAiLlm } from './llm.openai.ts'
export type { LlmMessage, LlmPort } from './llm.port.ts'
