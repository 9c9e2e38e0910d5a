import { Redis, type RedisOptions } from 'ioredis'
import { parseRedisUrl, type RedisLocation } from './config/redis-url.ts'

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
 * - reconnect attempts every 50 ms growing to REDIS_RETRY_CAP_MS at most, and never more however
 *   many attempts an outage has taken (45 s or 5 min alike), so Triad is back within about half
 *   a second of Redis's return, with no restart;
 * - a PING every REDIS_PING_INTERVAL_MS on every connection (see `pingWhileReady`).
 */
const REDIS_COMMAND_TIMEOUT_MS = 500
const REDIS_RETRY_CAP_MS = 500
const REDIS_CONNECT_TIMEOUT_MS = 1000
const REDIS_SOCKET_TIMEOUT_MS = 1000
const REDIS_PING_INTERVAL_MS = 1000

/** The wait before reconnection attempt `attempt` (1, 2, …), of every client Triad creates. */
export const retryDelay = (attempt: number) => Math.min(attempt * 50, REDIS_RETRY_CAP_MS)

const failFastRedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  socketTimeout: REDIS_SOCKET_TIMEOUT_MS,
  connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  retryStrategy: retryDelay,
} satisfies RedisOptions

/**
 * With Sentinel, each (re)connection asks a sentinel for the master and then checks, with the
 * ready check's INFO, that the node it reached is a master (a demoted one is dropped and the
 * sentinels asked again), so a failover is followed by the reconnection that the master's loss
 * starts. On top of that:
 * - `failoverDetector`: the client also listens to the sentinels' `+switch-master` and
 *   reconnects at once, which is what moves a connection that stays open to a master that is
 *   no longer reachable (a partition rather than a crash; the idle subscriber of the operator
 *   channel would otherwise wait for TCP keep-alive);
 * - a sentinel is given the same connect and command timeouts as Redis, so one that hangs
 *   delays a reconnection by a second at most before the next sentinel is asked, and when none
 *   answers the round starts again on the same 50–500 ms schedule;
 * - the failover detector's own connections to the sentinels are dialled again on that schedule
 *   too (ioredis waits a minute by default, blind to a switch meanwhile).
 */
function sentinelOptions(location: Extract<RedisLocation, { kind: 'sentinel' }>): RedisOptions {
  return {
    sentinels: location.sentinels,
    name: location.masterName,
    role: 'master',
    username: location.username,
    password: location.password,
    sentinelPassword: location.sentinelPassword,
    failoverDetector: true,
    sentinelCommandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    sentinelRetryStrategy: retryDelay,
    sentinelReconnectStrategy: retryDelay,
  }
}

/**
 * ioredis ends a Sentinel client for good when its failover detector fires while a
 * reconnection is asking a sentinel for the master (the detector's disconnect aborts that
 * attempt, and an aborted attempt is taken for the end): a +switch-master that lands in that
 * window would leave the instance without Redis until a restart. Such a client is connected
 * again; one Triad closes (`closeRedis`) stays closed.
 */
const closedOnPurpose = new WeakSet<Redis>()

function reconnectWhenEnded(redis: Redis): Redis {
  redis.on('end', () => {
    if (closedOnPurpose.has(redis)) return
    setTimeout(() => {
      if (redis.status === 'end' && !closedOnPurpose.has(redis)) redis.connect().catch(() => {})
    }, REDIS_RETRY_CAP_MS).unref()
  })
  return redis
}

/**
 * A connection nothing is sent on (the operator channel's subscriber always; the shared one on
 * a quiet instance) notices a dead peer only through TCP keep-alive, minutes later: after a
 * partition during which Redis dropped it (or restarted), it stays "ready" and hears nothing
 * while publishing works again. A PING each second puts every connection under the socket
 * timeout: a dead one is dropped and dialled again within about a second of the PING that
 * found it, so within about two seconds of Redis's return. Timers only: nothing is traced
 * (the ioredis instrumentation wants a parent span).
 */
const pingTimers = new WeakMap<Redis, NodeJS.Timeout>()

function pingWhileReady(redis: Redis): Redis {
  const timer = setInterval(() => {
    if (redisReady(redis)) redis.ping().catch(() => {})
  }, REDIS_PING_INTERVAL_MS).unref()
  pingTimers.set(redis, timer)
  // A client ended on purpose stops; a Sentinel client that ioredis ended is connected again.
  redis.on('end', () => {
    if (closedOnPurpose.has(redis) || !redis.options.sentinels) clearInterval(timer)
  })
  return redis
}

/**
 * A client for REDIS_URL (one server, or the master its sentinels name) with the options above;
 * it connects when `connectRedis` is called.
 */
export function createRedis(url: string): Redis {
  const location = parseRedisUrl(url)
  if (location.kind === 'server') return pingWhileReady(new Redis(url, failFastRedisOptions))
  return pingWhileReady(reconnectWhenEnded(new Redis({ ...failFastRedisOptions, ...sentinelOptions(location) })))
}

/** A second connection to the same Redis (following the same sentinels), for a use that needs one of its own. */
export function duplicateRedis(redis: Redis, overrides: Partial<RedisOptions> = {}): Redis {
  const duplicate = redis.duplicate(overrides)
  return pingWhileReady(redis.options.sentinels ? reconnectWhenEnded(duplicate) : duplicate)
}

/** Disconnects for good (a Sentinel client is not connected again, see `reconnectWhenEnded`). */
export function closeRedis(redis: Redis): void {
  closedOnPurpose.add(redis)
  clearInterval(pingTimers.get(redis))
  redis.disconnect()
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
