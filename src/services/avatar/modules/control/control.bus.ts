import { EventEmitter } from 'node:events'
import type { Redis } from 'ioredis'
import { closeRedis, connectRedis, duplicateRedis, redisNotReady, redisReady } from '../../../../core/redis.ts'

/**
 * Delivers what an operator sends to every page showing a session, on whichever instance the
 * page is connected to: through Redis pub/sub when Redis is configured, within the process
 * otherwise (one instance, or tests).
 */
export interface ControlBus {
  /** Whether a publish can be delivered now (false while Redis is unreachable). */
  available(): boolean
  publish(sessionId: string, message: string): Promise<void>
  /**
   * Listens to a session; resolves once messages published from now on will arrive, rejects
   * when that cannot be promised now (Redis unreachable). Returns the way to stop.
   */
  subscribe(sessionId: string, listener: (message: string) => void): Promise<() => void>
  /**
   * Listens to a session from now on if it can, else from when it can (Redis's return), and
   * goes on across outages; never fails. Returns the way to stop.
   */
  follow(sessionId: string, listener: (message: string) => void): () => void
  close(): Promise<void>
}

const CHANNEL_PREFIX = 'triad:avatar:session:'

/** Listeners by session, shared by both buses (the Redis one fans a channel's messages out to them). */
function createListeners() {
  const emitter = new EventEmitter()
  // One listener per open page: thousands of pages on a session are not a leak.
  emitter.setMaxListeners(0)
  return {
    add(sessionId: string, listener: (message: string) => void): () => number {
      emitter.on(sessionId, listener)
      return () => {
        emitter.off(sessionId, listener)
        return emitter.listenerCount(sessionId)
      }
    },
    emit: (sessionId: string, message: string) => emitter.emit(sessionId, message),
    sessions: () => emitter.eventNames().filter((name): name is string => typeof name === 'string'),
  }
}

/** Within one process. */
export function createLocalBus(): ControlBus {
  const listeners = createListeners()
  return {
    available: () => true,
    async publish(sessionId, message) {
      listeners.emit(sessionId, message)
    },
    async subscribe(sessionId, listener) {
      const remove = listeners.add(sessionId, listener)
      return () => void remove()
    },
    follow(sessionId, listener) {
      const remove = listeners.add(sessionId, listener)
      return () => void remove()
    },
    async close() {},
  }
}

/** How long a subscription waits for the listening connection to be ready while Redis answers (it is opened on first use). */
const SUBSCRIBER_WAIT_MS = 500

/**
 * Through Redis: messages are published on the session's channel with the shared connection;
 * a second connection (a subscribed connection can do nothing else), opened on first use,
 * holds one subscription per session that has a listener on this instance. Nothing waits for
 * Redis: while it is unreachable, publishing and subscribing fail at once (the routes answer
 * 503), and each time the listening connection is ready again it subscribes every session that
 * has a listener here, so pages that listened through an outage hear messages again.
 */
export function createRedisBus(redis: Redis, options: { onError?: (error: unknown) => void } = {}): ControlBus {
  const listeners = createListeners()
  let subscriber: Redis | undefined
  const connection = () => {
    if (!subscriber) {
      // Resubscribed below rather than by ioredis, which knows only the subscriptions that succeeded.
      const created = duplicateRedis(redis, { autoResubscribe: false })
      created.on('error', (error: unknown) => options.onError?.(error))
      created.on('message', (channel: string, message: string) => {
        if (channel.startsWith(CHANNEL_PREFIX)) listeners.emit(channel.slice(CHANNEL_PREFIX.length), message)
      })
      created.on('ready', () => {
        const channels = listeners.sessions().map((sessionId) => CHANNEL_PREFIX + sessionId)
        if (channels.length > 0) created.subscribe(...channels).catch((error: unknown) => options.onError?.(error))
      })
      subscriber = created
    }
    return subscriber
  }
  const subscribeNow = async (sessionId: string) => {
    const listening = connection()
    // Opening it is waited for (briefly) only while Redis answers the shared connection.
    await connectRedis(listening, redisReady(redis) ? SUBSCRIBER_WAIT_MS : 0)
    if (!redisReady(listening)) throw redisNotReady(listening)
    await listening.subscribe(CHANNEL_PREFIX + sessionId)
  }
  const stopper = (sessionId: string, remove: () => number) => () => {
    if (remove() > 0 || !subscriber || !redisReady(subscriber)) return
    subscriber.unsubscribe(CHANNEL_PREFIX + sessionId).catch((error: unknown) => options.onError?.(error))
  }
  return {
    available: () => redisReady(redis),
    async publish(sessionId, message) {
      await redis.publish(CHANNEL_PREFIX + sessionId, message)
    },
    async subscribe(sessionId, listener) {
      const remove = listeners.add(sessionId, listener)
      // Every listener waits for the subscription (Redis answers a repeated SUBSCRIBE too), so
      // none misses a message published after it resolves.
      try {
        await subscribeNow(sessionId)
      } catch (error) {
        stopper(sessionId, remove)()
        throw error
      }
      return stopper(sessionId, remove)
    },
    follow(sessionId, listener) {
      const remove = listeners.add(sessionId, listener)
      // Failing now, it is subscribed when the listening connection is ready again.
      subscribeNow(sessionId).catch(() => {})
      return stopper(sessionId, remove)
    },
    async close() {
      if (subscriber) closeRedis(subscriber)
      subscriber = undefined
    },
  }
}
