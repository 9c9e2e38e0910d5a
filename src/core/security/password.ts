import { type Algorithm, hash, verify } from '@node-rs/argon2'

// @node-rs/argon2 exports Algorithm as an ambient const enum, which erasable TypeScript cannot read.
const ARGON2ID = 2 as Algorithm

/**
 * argon2id with OWASP's first recommended profile (m = 19 MiB, t = 2, p = 1): strong enough
 * against GPU guessing, and cheap enough that a 2-core instance still serves dozens of logins
 * per second (figures in bench/README.md). The parameters are stored in each hash, so they
 * can be raised later without invalidating existing passwords.
 */
const PASSWORD_HASH_OPTIONS = {
  algorithm: ARGON2ID,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS)
}

let dummyHash: Promise<string> | undefined

/**
 * Checks a password against a stored hash. With no hash (unknown user, account without a
 * password) it still runs one verification against a throw-away hash, so every failure costs
 * the same time and the response time does not tell whether an account exists.
 */
export async function verifyPassword(password: string, storedHash: string | null | undefined): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword('triad-timing-equaliser')
    await verify(await dummyHash, password).catch(() => false)
    return false
  }
  try {
    return await verify(storedHash, password)
  } catch {
    return false
  }
}
