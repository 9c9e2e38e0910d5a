import { Redis, type RedisOptions } from 'ioredis'

/**
 * How Triad talks to Redis: never wait for it. Every use of Redis has an answer without it (rate
 * limits count in memory, the operator channel answers 503), so a command that cannot be sent
 * now fails now instead of queueing behind ioredis's reconnect cycle, which is what made every
 * limited request wait 10–15 s while Redis was gone (issue 25):
 * - `enableOfflineQueue: false`: a command while not connected is refused at once;
 * - `maxRetriesPerRequest: 0`: a command in flight when the connection drops fails with it;
 * - `commandTimeout`: a command Redis does not answer (hung, or the path to it is gone without a
 *   reset) fails after REDIS_COMMAND_TIMEOUT_MS;
 * - `socketTimeout`: and a connection that stays silent that long after a command is dropped
 *   and dialled again, so a hung connection does not stay "ready" and every later command fails
 *   at once instead of each waiting out the timeout;
 * - reconnect attempts every 50 ms growing to REDIS_RETRY_CAP_MS at most, so Triad is back within
 *   about half a second of Redis's return, with no restart.
 */
const REDIS_COMMAND_TIMEOUT_MS = 500
const REDIS_RETRY_CAP_MS = 500
const REDIS_CONNECT_TIMEOUT_MS = 1000
const REDIS_SOCKET_TIMEOUT_MS = 1000

const failFastRedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  socketTimeout: REDIS_SOCKET_TIMEOUT_MS,
  connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  retryStrategy: (attempt: number) => Math.min(attempt * 50, REDIS_RETRY_CAP_MS),
} satisfies RedisOptions

/** A client for REDIS_URL with the options above; it connects when `connectRedis` is called. */
export function createRedis(url: string): Redis {
  return new Redis(url, failFastRedisOptions)
}

/** Whether a command sent now can be answered (connected, handshake done). */
export function redisReady(redis: Redis): boolean {
  return redis.status === 'ready'
}

/**
 * Starts connecting (a no-op once started) and resolves when the client is ready, when an
 * attempt fails, or after `waitMs`, whichever comes first; never rejects: without Redis, Triad
 * serves in its documented degraded mode and ioredis goes on reconnecting in the background.
 */
export async function connectRedis(redis: Redis, waitMs: number): Promise<void> {
  if (redis.status === 'wait') redis.connect().catch(() => {})
  if (redisReady(redis) || waitMs <= 0) return
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done).off('error', done)
      resolve()
    }
    const timer = setTimeout(done, waitMs)
    redis.on('ready', done).on('error', done)
  })
}

/** The error a use of Redis gives when the client is not connected (nothing was sent). */
export function redisNotReady(redis: Redis): Error {
  return new Error(`Redis is not connected (${redis.status})`)
}
