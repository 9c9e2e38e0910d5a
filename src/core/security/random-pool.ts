import { randomFillSync } from 'node:crypto'

const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let offset = POOL_BYTES

/**
 * `size` bytes from the system's CSPRNG, like `crypto.randomBytes`, drawn from a pool refilled
 * 4 KiB at a time. Each `randomBytes` call costs a `getpid` system call (OpenSSL's fork check),
 * which on this VM was a tenth of the CPU of a `POST /vault` (8 µs of 67); Node's own
 * `randomUUID` pools its entropy the same way. Every byte is handed out once, and the caller
 * gets its own copy.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES / 8) return randomFillSync(Buffer.allocUnsafe(size))
  if (offset + size > POOL_BYTES) {
    randomFillSync(pool)
    offset = 0
  }
  const bytes = Buffer.from(pool.subarray(offset, offset + size))
  pool.fill(0, offset, offset + size)
  offset += size
  return bytes
}
