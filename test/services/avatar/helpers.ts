import type { FastifyInstance } from 'fastify'
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
