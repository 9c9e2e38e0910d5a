import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { closeRedis, createRedis, duplicateRedis, retryDelay } from '../../src/core/redis.ts'

const FAIL_FAST = ['lazyConnect', 'enableOfflineQueue', 'maxRetriesPerRequest', 'commandTimeout', 'socketTimeout', 'connectTimeout', 'retryStrategy'] as const

describe('the Redis client (core/redis.ts)', () => {
  it('follows sentinels with every fail-fast option of a single-server client, and checks it reached a master', () => {
    const single = createRedis('redis://127.0.0.1:6379')
    const client = createRedis('redis+sentinel://app:s%40cret@127.0.0.1:26379,127.0.0.1:26380/triad?sentinelPassword=watch')
    for (const option of FAIL_FAST) assert.equal(client.options[option], single.options[option], option)
    assert.deepEqual(client.options.sentinels, [
      { host: '127.0.0.1', port: 26379 },
      { host: '127.0.0.1', port: 26380 },
    ])
    assert.equal(client.options.name, 'triad')
    assert.equal(client.options.role, 'master')
    // The ready check's INFO is where ioredis compares the node's role with `role`.
    assert.equal(client.options.enableReadyCheck, true)
    assert.equal(client.options.failoverDetector, true)
    assert.equal(client.options.sentinelCommandTimeout, client.options.commandTimeout)
    assert.deepEqual([client.options.username, client.options.password, client.options.sentinelPassword], ['app', 's@cret', 'watch'])

    // The operator channel's listening connection follows the same sentinels.
    const subscriber = duplicateRedis(client, { autoResubscribe: false })
    assert.deepEqual(subscriber.options.sentinels, client.options.sentinels)
    assert.equal(subscriber.options.failoverDetector, true)
    assert.equal(subscriber.options.enableOfflineQueue, false)
    assert.equal(subscriber.options.autoResubscribe, false)
    for (const redis of [single, client, subscriber]) closeRedis(redis)
  })

  it('waits 500 ms at most between reconnection attempts, however many an outage has taken, on every connection Triad opens', () => {
    // Attempts come 50, 100, … 500 ms apart: the tenth, 2.75 s into an outage, reaches the cap,
    // and a 45 s outage is some 95 attempts, a 5 min one some 600.
    assert.deepEqual([1, 2, 9, 10, 11, 95, 600, 1e6].map(retryDelay), [50, 100, 450, 500, 500, 500, 500, 500])
    const single = createRedis('redis://127.0.0.1:6379')
    const sentinel = createRedis('redis+sentinel://127.0.0.1:26379/triad')
    const clients = [single, sentinel, duplicateRedis(single, { autoResubscribe: false }), duplicateRedis(sentinel, { autoResubscribe: false })]
    for (const client of clients) assert.equal(client.options.retryStrategy, retryDelay)
    // Asking the sentinels for the master, and the failover detector's connections to them.
    for (const client of clients.filter((redis) => redis.options.sentinels)) {
      assert.equal(client.options.sentinelRetryStrategy, retryDelay)
      assert.equal(client.options.sentinelReconnectStrategy, retryDelay)
    }
    for (const client of clients) closeRedis(client)
  })
})
