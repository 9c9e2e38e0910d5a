import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SignJWT } from 'jose'
import { signJwt, verifyJwt } from '../../../../src/core/security/jwt.ts'
import { hashPassword, verifyPassword } from '../../../../src/core/security/password.ts'
import { deriveKey, generateSecretToken, hashSecretToken, safeEqual } from '../../../../src/core/security/secret-token.ts'

const key = deriveKey('k'.repeat(40), 'test')
const now = new Date('2026-01-01T00:00:00Z')
const exp = Math.floor(now.getTime() / 1000) + 60

test('verifyJwt accepts HS256 of its key and type only; every other token is undefined, not an exception', async () => {
  const good = await signJwt({ sub: 'x', exp }, key)
  assert.equal((await verifyJwt(good, key, { now }))?.sub, 'x')
  assert.equal(await verifyJwt(good, key, { now, type: 'other' }), undefined)
  const typed = await signJwt({ sub: 'x', exp }, key, { type: 'special' })
  assert.equal((await verifyJwt(typed, key, { now, type: 'special' }))?.sub, 'x')
  assert.equal(await verifyJwt(typed, key, { now }), undefined)
  assert.equal(await verifyJwt(good, deriveKey('k'.repeat(40), 'another purpose'), { now }), undefined)
  assert.equal(await verifyJwt(good, key, { now: new Date(exp * 1000) }), undefined)
  const hs512 = await new SignJWT({ sub: 'x', exp }).setProtectedHeader({ alg: 'HS512' }).sign(key)
  assert.equal(await verifyJwt(hs512, key, { now }), undefined)
  const [, payload] = good.split('.')
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`
  assert.equal(await verifyJwt(none, key, { now }), undefined)
  const noExp = await signJwt({ sub: 'x' }, key)
  assert.equal(await verifyJwt(noExp, key, { now }), undefined)
  for (const junk of ['', '.', 'a.b.c', 'x'.repeat(5000), '\u0000']) assert.equal(await verifyJwt(junk, key, { now }), undefined)
})

test('argon2id hashes verify, carry their parameters, and an unknown user costs a verification too', async () => {
  const hash = await hashPassword('a password')
  assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
  assert.equal(await verifyPassword('a password', hash), true)
  assert.equal(await verifyPassword('a Password', hash), false)
  assert.equal(await verifyPassword('a password', 'not a hash'), false)

  const time = async (work: () => Promise<unknown>) => {
    const samples: number[] = []
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint()
      await work()
      samples.push(Number(process.hrtime.bigint() - start))
    }
    return samples.sort((a, b) => a - b)[2] ?? 0
  }
  await verifyPassword('warm up', undefined)
  const known = await time(() => verifyPassword('wrong', hash))
  const unknown = await time(() => verifyPassword('wrong', undefined))
  // Same order of magnitude: an argon2 verification either way (a lookup alone would be ~1000× faster).
  assert.ok(unknown > known / 5 && unknown < known * 5, `known ${known} ns, unknown ${unknown} ns`)
})

test('secret tokens: random, prefixed on request, stored as SHA-256, compared in constant time', () => {
  const token = generateSecretToken(32, 'hof')
  assert.match(token, /^hof_[A-Za-z0-9_-]{43}$/)
  assert.notEqual(generateSecretToken(), generateSecretToken())
  assert.match(hashSecretToken(token), /^[0-9a-f]{64}$/)
  assert.equal(safeEqual('abc', 'abc'), true)
  assert.equal(safeEqual('abc', 'abd'), false)
  assert.equal(safeEqual('abc', 'abcd'), false)
})
