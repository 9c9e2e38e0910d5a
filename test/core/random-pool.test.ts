import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pooledRandomBytes } from '../../src/core/security/random-pool.ts'

describe('pooledRandomBytes', () => {
  it('hands out every byte once: no two draws repeat across several refills', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 3000; i++) {
      const bytes = pooledRandomBytes(12)
      assert.equal(bytes.length, 12)
      seen.add(bytes.toString('hex'))
    }
    assert.equal(seen.size, 3000)
  })

  it('gives the caller its own copy, and serves sizes larger than the pool share directly', () => {
    const first = pooledRandomBytes(16)
    const copy = Buffer.from(first)
    pooledRandomBytes(16)
    assert.deepEqual(first, copy)
    const large = pooledRandomBytes(2048)
    assert.equal(large.length, 2048)
    assert.notDeepEqual(large.subarray(0, 1024), Buffer.alloc(1024))
  })
})
