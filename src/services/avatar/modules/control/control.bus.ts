import { EventEmitter } from 'node:events'
import type { Redis } from 'ioredis'

/**
 * Delivers what an operator sends to every page showing a session, on whichever instance the
 * page is connected to: through Redis pub/sub when Redis is configured, within the process
 * otherwise (one instance, or tests).
 */
export interface ControlBus {
  publish(sessionId: string, message: string): Promise<void>
  /** Listens to a session; resolves once messages published from now on will arrive. Returns the way to stop. */
  subscribe(sessionId: string, listener: (message: string) => void): Promise<() => void>
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
  }
}

/** Within one process. */
export function createLocalBus(): ControlBus {
  const listeners = createListeners()
  return {
    async publish(sessionId, message) {
      listeners.emit(sessionId, message)
    },
    async subscribe(sessionId, listener) {
      const remove = listeners.add(sessionId, listener)
      return () => void remove()
    },
    async close() {},
  }
}

/**
 * Through Redis: messages are published on the session's channel with the shared connection;
 * a second connection (a subscribed connection can do nothing else), opened on first use,
 * holds one subscription per session that has a listener on this instance.
 */
export function createRedisBus(redis: Redis, options: { onError?: (error: unknown) => void } = {}): ControlBus {
  const listeners = createListeners()
  let subscriber: Redis | undefined
  const connection = () => {
    if (!subscriber) {
      subscriber = redis.duplicate()
      subscriber.on('error', (error: unknown) => options.onError?.(error))
      subscriber.on('message', (channel: string, message: string) => {
        if (channel.startsWith(CHANNEL_PREFIX)) listeners.emit(channel.slice(CHANNEL_PREFIX.length), message)
      })
    }
    return subscriber
  }
  return {
    async publish(sessionId, message) {
      await redis.publish(CHANNEL_PREFIX + sessionId, message)
    },
    async subscribe(sessionId, listener) {
      const remove = listeners.add(sessionId, listener)
      // Every listener waits for the subscription (Redis answers a repeated SUBSCRIBE too), so
      // none misses a message published after it resolves.
      try {
        await connection().subscribe(CHANNEL_PREFIX + sessionId)
      } catch (error) {
        remove()
        throw error
      }
      return () => {
        if (remove() === 0) connection().unsubscribe(CHANNEL_PREFIX + sessionId).catch((error: unknown) => options.onError?.(error))
      }
    },
    async close() {
      subscriber?.disconnect()
      subscriber = undefined
    },
  }
}
