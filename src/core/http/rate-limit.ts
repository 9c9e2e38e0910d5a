import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { Clock } from '../clock.ts'
import { redisNotReady, redisReady } from '../redis.ts'

/** A limit of `limit` requests per fixed window of `windowMs`. */
export interface RateLimitRule {
  limit: number
  windowMs: number
}

const UNIT_MS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
}

export const RATE_LIMIT_PATTERN = '^\\s*(0|\\d+\\s*/\\s*(s|sec|second|m|min|minute|h|hr|hour))\\s*$'

/**
 * Parses `30/min`, `5/s` or `1000/h` (also `second`, `minute`, `hour`); `0` means no limit
 * and gives `undefined`.
 */
export function parseRateLimit(text: string): RateLimitRule | undefined {
  const trimmed = text.trim()
  if (trimmed === '0') return undefined
  const match = /^(\d+)\s*\/\s*([a-z]+)$/i.exec(trimmed)
  const unit = match ? UNIT_MS[match[2].toLowerCase()] : undefined
  if (!match || unit === undefined) throw new Error(`not a rate limit: ${text} (expected e.g. 30/min, 5/s, 1000/h or 0)`)
  const limit = Number(match[1])
  if (limit === 0) return undefined
  return { limit, windowMs: unit }
}

export interface RateLimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Whole seconds until the window resets (at least 1): the value of Retry-After. */
  resetSeconds: number
}

export interface RateLimiter {
  /** Counts one request of `key` and says whether it is within the limit. */
  hit(key: string): Promise<RateLimitResult>
}

export interface RateLimiterOptions extends RateLimitRule {
  clock: Clock
  /** When given, counters live in Redis and every instance sharing it shares the limit. */
  redis?: Redis
  /** Namespaces the Redis keys (one per service and rule). */
  prefix: string
  /**
   * Called when Redis fails after answering (once per outage, not per request); requests are
   * then counted in this instance's memory (a limiter must not take the API down).
   */
  onStoreError?: (error: unknown) => void
  /** Called when Redis counts again after `onStoreError`. */
  onStoreRecovered?: () => void
}

/**
 * After Redis failed to count a request, the next this long are counted in memory without
 * asking it: a Redis that hangs rather than refuses costs one command timeout a second, not one
 * per request. Short, so counting goes back to Redis within a second of its return.
 */
const STORE_RETRY_MS = 250

/** How many in-memory keys to keep before sweeping the ones whose window has passed. */
const SWEEP_THRESHOLD = 10_000

/**
 * A fixed-window counter: the window is the clock's time floored to `windowMs`, so every
 * instance agrees on window boundaries without coordination, and the reset time (hence
 * Retry-After) follows from the clock alone.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { limit, windowMs, clock, redis, prefix } = options
  const memory = new Map<string, { windowStart: number; count: number }>()

  const result = (count: number, windowStart: number, now: number): RateLimitResult => ({
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)),
  })

  const hitMemory = (key: string, windowStart: number): number => {
    const entry = memory.get(key)
    if (entry && entry.windowStart === windowStart) return ++entry.count
    if (memory.size >= SWEEP_THRESHOLD) {
      for (const [other, value] of memory) if (value.windowStart < windowStart) memory.delete(other)
    }
    memory.set(key, { windowStart, count: 1 })
    return 1
  }

  const hitRedis = async (store: Redis, key: string, windowStart: number): Promise<number> => {
    const redisKey = `${prefix}:${windowStart}:${key}`
    // The key outlives its window a little, so a clock skew between instances cannot revive it.
    const replies = await store
      .multi()
      .incr(redisKey)
      .pexpire(redisKey, windowMs + 5000)
      .exec()
    const [error, count] = replies?.[0] ?? [new Error('empty reply from Redis'), 0]
    if (error) throw error
    return Number(count)
  }

  // A small circuit breaker: while Redis is known to be unreachable (not connected, or it failed
  // within STORE_RETRY_MS), requests are counted in memory at once and nobody waits for it.
  let failing = false
  let retryAt = 0
  const storeFailed = (error: unknown) => {
    retryAt = performance.now() + STORE_RETRY_MS
    if (failing) return
    failing = true
    options.onStoreError?.(error)
  }

  return {
    async hit(key) {
      const now = clock.now().getTime()
      const windowStart = Math.floor(now / windowMs) * windowMs
      if (!redis || (failing && performance.now() < retryAt)) return result(hitMemory(key, windowStart), windowStart, now)
      if (!redisReady(redis)) {
        storeFailed(redisNotReady(redis))
        return result(hitMemory(key, windowStart), windowStart, now)
      }
      try {
        const count = await hitRedis(redis, key, windowStart)
        if (failing) {
          failing = false
          options.onStoreRecovered?.()
        }
        return result(count, windowStart, now)
      } catch (error) {
        storeFailed(error)
        return result(hitMemory(key, windowStart), windowStart, now)
      }
    },
  }
}

export interface RateLimitHookOptions {
  limiter: RateLimiter
  /** The client a request counts against (an IP address, an API key's hash…). */
  keyOf(request: FastifyRequest): string
  /** The error to throw when the limit is exceeded; the service's error handler renders it. */
  onExceeded(result: RateLimitResult): Error
}

/** Sets the standard rate-limit headers on a reply (IETF draft names, as most APIs send them). */
function setRateLimitHeaders(reply: FastifyReply, result: RateLimitResult): void {
  reply.header('x-ratelimit-limit', String(result.limit))
  reply.header('x-ratelimit-remaining', String(result.remaining))
  reply.header('x-ratelimit-reset', String(result.resetSeconds))
}

/**
 * An `onRequest` hook: counts the request before its body is even read, so a flood of
 * requests costs as little as possible; adds the headers, and throws when over the limit.
 */
export function rateLimitHook(options: RateLimitHookOptions) {
  return async function enforceRateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const result = await options.limiter.hit(options.keyOf(request))
    setRateLimitHeaders(reply, result)
    if (!result.allowed) {
      reply.header('retry-after', String(result.resetSeconds))
      throw options.onExceeded(result)
    }
  }
}
