import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTestDatabase } from '../../../helpers/build-app.ts'
import { addEperson, type BrowserClient, PASSWORD, startAuthn } from '../helpers.ts'

async function attempt(app: BrowserClient['app'], user: string, password: string, remoteAddress = '203.0.113.7') {
  return app.inject({
    method: 'POST',
    url: '/api/authn/login',
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'DSPACE-XSRF-COOKIE=x', 'x-xsrf-token': 'x' },
    payload: new URLSearchParams({ user, password }).toString(),
  })
}

test('per account: 5 failures, then 429 with Retry-After and a growing back-off capped at a minute', async (t) => {
  const test_ = await startAuthn(t)
  await addEperson(test_, 'alice@example.org')
  for (let i = 0; i < 4; i++) assert.equal((await attempt(test_.app, 'alice@example.org', 'wrong')).statusCode, 401)
  // The fifth failure still answers 401, and starts the back-off.
  assert.equal((await attempt(test_.app, 'alice@example.org', 'wrong')).statusCode, 401)
  const blocked = await attempt(test_.app, 'alice@example.org', PASSWORD)
  assert.equal(blocked.statusCode, 429)
  assert.equal(blocked.headers['retry-after'], '1')
  assert.deepEqual(Object.keys(blocked.json()).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
  // Hammering while blocked neither checks the password nor extends the block.
  for (let i = 0; i < 5; i++) assert.equal((await attempt(test_.app, 'alice@example.org', 'wrong')).statusCode, 429)
  test_.clock.advance(1_000)
  assert.equal((await attempt(test_.app, 'alice@example.org', 'wrong')).statusCode, 401)
  assert.equal((await attempt(test_.app, 'alice@example.org', 'wrong')).headers['retry-after'], '2')
  const waits: number[] = []
  for (let i = 0; i < 8; i++) {
    const response = await attempt(test_.app, 'alice@example.org', 'wrong')
    const wait = Number(response.headers['retry-after'] ?? 0)
    if (wait > 0) {
      waits.push(wait)
      test_.clock.advance(wait * 1000)
    }
    await attempt(test_.app, 'alice@example.org', 'wrong')
  }
  assert.ok(waits.length >= 3, `saw back-offs: ${waits}`)
  assert.ok(
    waits.every((wait, index) => index === 0 || wait >= (waits[index - 1] ?? 0)),
    `waits grow: ${waits}`,
  )
  assert.ok(Math.max(...waits) <= 60, `capped: ${waits}`)
  // Other accounts are unaffected; the real password works once the wait is over, and clears the count.
  assert.equal((await attempt(test_.app, 'admin@example.org', PASSWORD)).statusCode, 200)
  test_.clock.advance(60_000)
  assert.equal((await attempt(test_.app, 'alice@example.org', PASSWORD)).statusCode, 200)
  assert.equal((await attempt(test_.app, 'alice@example.org', 'wrong')).statusCode, 401)
})

test('unknown accounts are throttled the same way (no account enumeration); failures are forgotten after 15 minutes', async (t) => {
  const test_ = await startAuthn(t)
  for (let i = 0; i < 5; i++) await attempt(test_.app, 'ghost@example.org', 'wrong')
  assert.equal((await attempt(test_.app, 'ghost@example.org', 'wrong')).statusCode, 429)
  test_.clock.advance(16 * 60_000)
  for (let i = 0; i < 4; i++) assert.equal((await attempt(test_.app, 'ghost@example.org', 'wrong')).statusCode, 401)
})

test('per client address: a higher bar across accounts, so one address cannot sweep many accounts', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_LOGIN_ATTEMPTS_PER_IP: '8' })
  await addEperson(test_, 'alice@example.org')
  for (let i = 0; i < 8; i++) assert.equal((await attempt(test_.app, `user${i}@example.org`, 'wrong')).statusCode, 401)
  const blocked = await attempt(test_.app, 'alice@example.org', PASSWORD)
  assert.equal(blocked.statusCode, 429)
  // Someone else, from another address, logs in to the same account.
  assert.equal((await attempt(test_.app, 'alice@example.org', PASSWORD, '198.51.100.1')).statusCode, 200)
})

test('the counts live in the database: a second instance sees the first one’s failures', async (t) => {
  const database = await createTestDatabase(t)
  const one = await startAuthn(t, {}, { database })
  const two = await startAuthn(t, {}, { database, clock: one.clock })
  await addEperson(one, 'alice@example.org')
  for (let i = 0; i < 5; i++) await attempt(i % 2 === 0 ? one.app : two.app, 'alice@example.org', 'wrong')
  assert.equal((await attempt(two.app, 'alice@example.org', PASSWORD)).statusCode, 429)
  assert.equal((await attempt(one.app, 'alice@example.org', PASSWORD)).statusCode, 429)
})
