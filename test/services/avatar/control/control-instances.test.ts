import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { buildAvatarApp, listenToEvents } from '../helpers.ts'

const KEY = 'operator-key-0123456789'

// Two avatar instances in one process over one database and one Redis, as two processes behind
// a load balancer share them (test/deploy/instances.test.ts does it with two real processes):
// the page listens on one, the operator speaks to the other.
describe('the operator channel across instances (Redis pub/sub)', () => {
  it('delivers a say sent to one instance to a page listening on the other', async (t) => {
    const env = { AVATAR_OPERATOR_KEY: KEY, REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' }
    const { app: a, database } = await buildAvatarApp(t, { env })
    const { app: b } = await buildAvatarApp(t, { env, database })
    await b.listen({ port: 0, host: '127.0.0.1' })
    const address = b.server.address()
    assert.ok(address && typeof address === 'object')
    const session = `two-${randomBytes(4).toString('hex')}`
    const page = await listenToEvents(`http://127.0.0.1:${address.port}`, session)
    t.after(() => page.close())

    const said = await a.inject({
      method: 'POST',
      url: `/v1/session/${session}/say`,
      headers: { authorization: `Bearer ${KEY}` },
      payload: { text: 'Sent to A, heard on B.', emotion: 'happy', action: 'wave' },
    })
    assert.equal(said.statusCode, 200)
    assert.deepEqual(await page.next(), said.json().event)

    // Kept once, in the database both share.
    const history = (await b.inject({ method: 'GET', url: `/v1/session/${session}/history` })).json()
    assert.deepEqual(
      history.messages.map((message: { role: string; content: string }) => [message.role, message.content]),
      [['operator', 'Sent to A, heard on B.']],
    )
  })
})
