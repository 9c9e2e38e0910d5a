import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { pooledRandomBytes } from './random-pool.ts'

/** A random URL-safe secret of `bytes` bytes, optionally with a readable prefix (`hof_…`). */
export function generateSecretToken(bytes = 32, prefix?: string): string {
  const body = pooledRandomBytes(bytes).toString('base64url')
  return prefix ? `${prefix}_${body}` : body
}

/** What is stored instead of a secret token: its SHA-256, hex. Tokens are random, so no salt is needed. */
export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** Compares two strings in constant time (for equal lengths; a length mismatch returns at once). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/** A key for one purpose derived from a master secret, so one secret never signs two kinds of thing. */
export function deriveKey(secret: string, purpose: string): Uint8Array {
  return new Uint8Array(createHmac('sha256', secret).update(purpose).digest())
}
