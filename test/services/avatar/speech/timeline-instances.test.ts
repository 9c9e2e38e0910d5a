import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { createFakeTtsProvider } from '../../../../src/services/avatar/providers/tts/tts.fake.ts'
import type { TtsProvider } from '../../../../src/services/avatar/providers/tts/tts.port.ts'
import { createTestDatabase } from '../../../helpers/build-app.ts'
import { buildAvatarApp } from '../helpers.ts'

/** Issue 25 §6: a WAV answer's viseme timeline is stored before the answer's last byte, as an MP3 one's. */

/**
 * The fake provider answering as espeak does: a WAV answer's length known up front (so sent as
 * Content-Length, the client knows the answer complete at its last byte), its timing settled
 * `delayMs` after the last chunk was read (a store that takes a while, as on a busy database).
 */
function provider(delayMs: number): TtsProvider {
  const fake = createFakeTtsProvider()
  return {
    ...fake,
    async synthesize(request) {
      const stream = await fake.synthesize(request)
      const parts: Uint8Array[] = []
      for await (const chunk of stream.chunks) parts.push(chunk)
      const { promise: lastRead, resolve } = Promise.withResolvers<void>()
      async function* chunks() {
        yield* parts
        resolve()
      }
      const length = request.format === 'wav' ? parts.reduce((total, part) => total + part.length, 0) : undefined
      const timing = stream.timing
      return { ...stream, length, chunks: chunks(), timing: timing && lastRead.then(() => sleep(delayMs)).then(() => timing) }
    },
  }
}

async function twoInstances(t: Parameters<typeof buildAvatarApp>[0], delayMs: number) {
  const database = await createTestDatabase(t)
  const speaking = await buildAvatarApp(t, { database, deps: { avatar: { tts: provider(delayMs) } } })
  const other = await buildAvatarApp(t, { database, deps: { avatar: { tts: createFakeTtsProvider() } } })
  const address = await speaking.app.listen({ port: 0, host: '127.0.0.1' })
  return { database, speaking, other, address }
}

describe('a binary answer’s viseme timeline, across instances', () => {
  for (const format of ['wav', 'mp3']) {
    it(`is on another instance the moment the ${format.toUpperCase()} answer is complete`, async (t) => {
      const { other, address } = await twoInstances(t, 300)
      const response = await fetch(`${address}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Papa papa.', format }) })
      assert.equal(response.status, 200)
      if (format === 'wav') assert.ok(response.headers.get('content-length'), 'a WAV answer has its length up front')
      const audio = Buffer.from(await response.arrayBuffer())
      const timeline = await other.app.inject({ method: 'GET', url: `/v1/tts/${response.headers.get('x-synthesis-id')}/visemes` })
      assert.equal(timeline.statusCode, 200, timeline.body)
      assert.ok(audio.length > 0)
    })
  }

  it('never completes an answer whose timeline could not be stored: the stream is cut short, the JSON answer is 503', async (t) => {
    const { database, address, speaking } = await twoInstances(t, 0)
    await sql`drop table avatar_tts_timelines`.execute(database.db)
    const response = await fetch(`${address}/v1/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Papa papa.', format: 'wav' }) })
    assert.equal(response.status, 200)
    const expected = Number(response.headers.get('content-length'))
    const received = await response.arrayBuffer().then(
      (body) => body.byteLength,
      () => 'cut short' as const,
    )
    assert.notEqual(received, expected, 'the answer must not arrive complete')

    const json = await speaking.app.inject({ method: 'POST', url: '/v1/tts', payload: { text: 'Papa papa.', format: 'wav', visemes: true } })
    assert.equal(json.statusCode, 503, json.body)
    assert.match(json.json().detail, /could not be stored/)
    assert.equal(json.headers['retry-after'], '1')
    assert.equal((await speaking.app.inject({ method: 'GET', url: '/health' })).statusCode, 200)
  })
})
