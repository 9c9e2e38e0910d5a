import { createCipheriv, createDecipheriv, createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { pooledRandomBytes } from '../../../../core/security/random-pool.ts'

const VERSION = 'v1'

/**
 * AES-256-GCM sealing of card data. Each value gets a fresh 96-bit IV; the row's id is the
 * additional authenticated data, so a sealed value copied into another row fails to open.
 * Layout: `v1.<iv>.<tag>.<ciphertext>` (base64url).
 */
export interface Sealer {
  seal(plain: string, aad: string): string
  open(sealed: string, aad: string): string | undefined
  /** HMAC-SHA256 under a key derived for `purpose`, base64url; for signed hints and challenge codes. */
  mac(purpose: string, data: string): string
}

export function createSealer(rawKey: Buffer): Sealer {
  if (rawKey.length !== 32) throw new RangeError('the vault key must be 32 bytes')
  // KeyObjects, made once: a Buffer key is turned into one on every cipher or HMAC call,
  // which costs about ten times the encryption itself.
  const key = createSecretKey(rawKey)
  const macKeys = new Map<string, KeyObject>()
  const macKey = (purpose: string) => {
    let derived = macKeys.get(purpose)
    if (!derived) {
      derived = createSecretKey(createHmac('sha256', key).update(`triad-payments:${purpose}`).digest())
      macKeys.set(purpose, derived)
    }
    return derived
  }
  return {
    seal(plain, aad) {
      const iv = pooledRandomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(aad))
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
    },
    open(sealed, aad) {
      const [version, iv, tag, body] = sealed.split('.')
      if (version !== VERSION || !iv || !tag || body === undefined) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
        decipher.setAAD(Buffer.from(aad))
        decipher.setAuthTag(Buffer.from(tag, 'base64url'))
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
      } catch {
        return undefined
      }
    },
    mac(purpose, data) {
      return createHmac('sha256', macKey(purpose)).update(data).digest('base64url')
    },
  }
}
