import multipart from '@fastify/multipart'
import Fastify from 'fastify'
import assert from 'node:assert/strict'
import type { Cleanup } from '../../../helpers/build-app.ts'

/**
 * An OpenAI-compatible `/v1/audio/transcriptions` endpoint on 127.0.0.1 that answers `reply`
 * and records what each request carried.
 */
export async function fakeOpenAi(t: Cleanup, reply: { status: number; body: unknown }) {
  const seen: Array<{ authorization?: string; model?: string; language?: string; bytes: number; filename: string; format?: string }> = []
  const server = Fastify()
  await server.register(multipart)
  server.post('/v1/audio/transcriptions', async (request, response) => {
    const entry: (typeof seen)[number] = { authorization: request.headers.authorization, bytes: 0, filename: '' }
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        entry.bytes = (await part.toBuffer()).length
        entry.filename = part.filename
      } else if (typeof part.value === 'string') {
        if (part.fieldname === 'model') entry.model = part.value
        if (part.fieldname === 'language') entry.language = part.value
        if (part.fieldname === 'response_format') entry.format = part.value
      }
    }
    seen.push(entry)
    return response.status(reply.status).send(reply.body)
  })
  await server.listen({ port: 0, host: '127.0.0.1' })
  t.after(() => server.close())
  const address = server.server.address()
  assert.ok(address && typeof address === 'object')
  return { seen, baseUrl: `http://127.0.0.1:${address.port}/v1` }
}
