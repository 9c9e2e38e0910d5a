import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createManualClock } from '../../../src/core/clock.ts'
import { createRateLimiter, parseRateLimit } from '../../../src/core/http/rate-limit.ts'
import { connectRedis, createRedis } from '../../../src/core/redis.ts'

describe('parseRateLimit', () => {
  it('reads per-second, per-minute and per-hour limits, and 0 as none', () => {
    assert.deepEqual(parseRateLimit('30/min'), { limit: 30, windowMs: 60_000 })
    assert.deepEqual(parseRateLimit('5/s'), { limit: 5, windowMs: 1000 })
    assert.deepEqual(parseRateLimit('1000 / h'), { limit: 1000, windowMs: 3_600_000 })
    assert.deepEqual(parseRateLimit('2/minute'), { limit: 2, windowMs: 60_000 })
    assert.equal(parseRateLimit('0'), undefined)
    assert.equal(parseRateLimit('0/min'), undefined)
    for (const bad of ['30', '30/day', 'x/min', '-1/min', '']) assert.throws(() => parseRateLimit(bad), /not a rate limit/)
  })
})

describe('fixed-window rate limiter in memory', () => {
  it('allows the limit per window, then refuses with the seconds left', async () => {
    const clock = createManualClock('2026-01-01T00:00:10.000Z')
    const limiter = createRateLimiter({ limit: 3, windowMs: 60_000, clock, prefix: 'test' })
    const results = [await limiter.hit('a'), await limiter.hit('a'), await limiter.hit('a'), await limiter.hit('a')]
    assert.deepEqual(
      results.map((result) => [result.allowed, result.remaining]),
      [
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    )
    assert.equal(results[3].resetSeconds, 50)
    assert.equal((await limiter.hit('b')).allowed, true)
    clock.advance(49_500)
    assert.equal((await limiter.hit('a')).resetSeconds, 1)
    clock.advance(500)
    const fresh = await limiter.hit('a')
    assert.deepEqual(fresh, { allowed: true, limit: 3, remaining: 2, resetSeconds: 60 })
  })

  it('forgets old windows once many clients have been seen', async () => {
    const clock = createManualClock()
    const limiter = createRateLimiter({ limit: 1, windowMs: 1000, clock, prefix: 'test' })
    for (let i = 0; i < 10_000; i++) await limiter.hit(`client-${i}`)
    clock.advance(1000)
    assert.equal((await limiter.hit('client-0')).allowed, true)
    assert.equal((await limiter.hit('client-new')).allowed, true)
  })
})

describe('fixed-window rate limiter in Redis', () => {
  const redis = createRedis('redis://127.0.0.1:6379')
  before(() => connectRedis(redis, 2000))
  after(() => redis.disconnect())

  it('shares one budget between instances', async () => {
    const clock = createManualClock()
    const prefix = `test:${randomUUID()}`
    const first = createRateLimiter({ limit: 2, windowMs: 60_000, clock, redis, prefix })
    const second = createRateLimiter({ limit: 2, windowMs: 60_000, clock, redis, prefix })
    assert.equal((await first.hit('c')).remaining, 1)
    assert.equal((await second.hit('c')).remaining, 0)
    const refused = await first.hit('c')
    assert.equal(refused.allowed, false)
    assert.equal(refused.resetSeconds, 60)
    const ttl = await redis.pttl(`${prefix}:${Math.floor(clock.now().getTime() / 60_000) * 60_000}:c`)
    assert.ok(ttl > 60_000 && ttl <= 65_000, `ttl ${ttl}`)
    clock.advance(60_000)
    assert.equal((await second.hit('c')).allowed, true)
  })

  it('counts in memory when Redis is unreachable, and says so once', async () => {
    const broken = createRedis('redis://127.0.0.1:1')
    broken.on('error', () => {})
    await connectRedis(broken, 1000)
    after(() => broken.disconnect())
    const errors: unknown[] = []
    const limiter = createRateLimiter({
      limit: 1,
      windowMs: 60_000,
      clock: createManualClock(),
      redis: broken,
      prefix: 'x',
      onStoreError: (error) => errors.push(error),
    })
    assert.equal((await limiter.hit('k')).allowed, true)
    assert.equal((await limiter.hit('k')).allowed, false)
    assert.equal(errors.length, 1, 'once per outage, not once per request')
  })
})
