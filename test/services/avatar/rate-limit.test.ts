import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { describe, it } from 'node:test'
import { ConfigError } from '../../../src/config.ts'
import { testConfig } from '../../helpers/build-app.ts'
import { buildAvatarApp, readStream } from './helpers.ts'

/** A client address no other test (or earlier run, through Redis) has used. */
const freshIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`

describe('rate limit on the chat endpoints', () => {
  it('allows 30 requests a minute by default, then answers 429 with the wait in the detail and headers', async (t) => {
    const { app, clock } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '30/min' } })
    clock.advance(15_000)
    const post = () => app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'hi' }, remoteAddress: '192.0.2.1' })
    for (let i = 1; i <= 30; i++) {
      const response = await post()
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-ratelimit-limit'], '30')
      assert.equal(response.headers['x-ratelimit-remaining'], String(30 - i))
      assert.equal(response.headers['x-ratelimit-reset'], '45')
    }
    const refused = await post()
    assert.equal(refused.statusCode, 429)
    assert.deepEqual(refused.json(), { detail: 'Rate limit exceeded. Try again in 45 seconds.' })
    assert.equal(refused.headers['retry-after'], '45')
    assert.equal(refused.headers['x-ratelimit-remaining'], '0')
    assert.equal(refused.headers['x-ratelimit-reset'], '45')

    clock.advance(44_000)
    assert.equal((await post()).json().detail, 'Rate limit exceeded. Try again in 1 seconds.')
    clock.advance(1000)
    assert.equal((await post()).statusCode, 200)
  })

  it('counts the stream endpoint too, refusing before a stream starts', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '2/min' } })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const first = await readStream(url, { userText: 'a' })
    assert.equal(first.response.status, 200)
    assert.equal(first.response.headers.get('x-ratelimit-limit'), '2')
    assert.equal(first.response.headers.get('x-ratelimit-remaining'), '1')
    assert.equal((await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'b' }, remoteAddress: '127.0.0.1' })).statusCode, 200)
    const { response, raw } = await readStream(url, { userText: 'c' })
    assert.equal(response.status, 429)
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
    assert.match(JSON.parse(raw).detail, /^Rate limit exceeded\. Try again in \d+ seconds\.$/)
    assert.equal(response.headers.get('retry-after'), JSON.parse(raw).detail.match(/(\d+) seconds/)[1])
  })

  it('keeps a budget per client: per IP, or per API key when one is sent', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '1/h' } })
    const post = (remoteAddress: string, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'hi' }, remoteAddress, headers })
    assert.equal((await post('192.0.2.1')).statusCode, 200)
    const refused = await post('192.0.2.1')
    assert.equal(refused.statusCode, 429)
    assert.equal(refused.headers['retry-after'], '3600')
    assert.equal((await post('192.0.2.2')).statusCode, 200)
    assert.equal((await post('192.0.2.1', { 'x-api-key': 'key-one' })).statusCode, 200)
    assert.equal((await post('192.0.2.3', { 'x-api-key': 'key-one' })).statusCode, 429)
    assert.equal((await post('192.0.2.1', { authorization: 'Bearer key-two' })).statusCode, 200)
  })

  it('leaves the session endpoints alone', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '1/s' } })
    for (let i = 0; i < 5; i++) {
      const response = await app.inject({ method: 'GET', url: '/v1/sessions' })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-ratelimit-limit'], undefined)
    }
  })

  it('is off with 0', async (t) => {
    const { app } = await buildAvatarApp(t, { env: { AVATAR_RATE_LIMIT: '0' } })
    for (let i = 0; i < 40; i++) {
      const response = await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'hi' } })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-ratelimit-limit'], undefined)
    }
  })

  it('refuses a malformed AVATAR_RATE_LIMIT at start', () => {
    for (const bad of ['30', '30/day', 'lots']) assert.throws(() => testConfig({ AVATAR_RATE_LIMIT: bad }), ConfigError)
    assert.deepEqual(testConfig({ AVATAR_RATE_LIMIT: '5/s' }).avatar.chat.rateLimit, { limit: 5, windowMs: 1000 })
    assert.deepEqual(testConfig({ AVATAR_RATE_LIMIT: '100/h' }).avatar.chat.rateLimit, { limit: 100, windowMs: 3_600_000 })
  })

  it('shares the budget between instances through Redis', async (t) => {
    const env = { AVATAR_RATE_LIMIT: '3/min', REDIS_URL: 'redis://127.0.0.1:6379' }
    const { app: first } = await buildAvatarApp(t, { env })
    const { app: second } = await buildAvatarApp(t, { env })
    const ip = freshIp()
    const post = (app: typeof first) => app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: 'hi' }, remoteAddress: ip })
    assert.equal((await post(first)).statusCode, 200)
    assert.equal((await post(second)).statusCode, 200)
    const third = await post(first)
    assert.equal(third.statusCode, 200)
    assert.equal(third.headers['x-ratelimit-remaining'], '0')
    const refused = await post(second)
    assert.equal(refused.statusCode, 429)
    assert.match(refused.json().detail, /^Rate limit exceeded\. Try again in 60 seconds\.$/)
  })
})
