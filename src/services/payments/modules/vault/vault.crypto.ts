import { createCipheriv, createDecipheriv, createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { keyIdOf } from '../../../../core/security/keyring.ts'
import { pooledRandomBytes } from '../../../../core/security/random-pool.ts'
import { safeEqual } from '../../../../core/security/secret-token.ts'

const VERSION = 'v2'
/** Values sealed before keys had ids (`v1.<iv>.<tag>.<ciphertext>`): any key may have sealed them. */
const LEGACY_VERSION = 'v1'
export const LEGACY_KEY_ID = 'legacy'

/** A vault key: its id (keyring.ts) and its 32 bytes. */
export interface VaultKey {
  id: string
  key: Buffer
}

/**
 * AES-256-GCM sealing of card data. Each value gets a fresh 96-bit IV; the row's id is the
 * additional authenticated data, so a sealed value copied into another row fails to open.
 * Layout: `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url): a sealed value names the key that
 * sealed it, so keys can rotate. Values from before key ids (`v1.…`) are opened by trying each key.
 */
export interface Sealer {
  /** Seals under the active key (the first). */
  seal(plain: string, aad: string): string
  open(sealed: string, aad: string): string | undefined
  /** The id of the key that sealed a value, LEGACY_KEY_ID for `v1` values, undefined for anything else. */
  keyIdOf(sealed: string): string | undefined
  /** Whether this sealer holds the key with this id. */
  knows(id: string): boolean
  readonly activeKeyId: string
  /** HMAC-SHA256 under a key derived from the active key for `purpose`, base64url; for signed hints and challenge codes. */
  mac(purpose: string, data: string): string
  /** Whether `mac` was made by `mac(purpose, data)` under any of the keys (so a rotation does not break a flow in progress). */
  macMatches(purpose: string, data: string, mac: string): boolean
}

/** The id of a vault key given as hex (the environment's form). */
export function vaultKeyIdOf(hex: string): string {
  return keyIdOf(hex.toLowerCase())
}

interface PreparedKey {
  id: string
  key: KeyObject
  macKeys: Map<string, KeyObject>
}

function prepare(vaultKey: VaultKey): PreparedKey {
  if (vaultKey.key.length !== 32) throw new RangeError('the vault key must be 32 bytes')
  // KeyObjects, made once: a Buffer key is turned into one on every cipher or HMAC call,
  // which costs about ten times the encryption itself.
  return { id: vaultKey.id, key: createSecretKey(vaultKey.key), macKeys: new Map() }
}

function macKey(prepared: PreparedKey, purpose: string): KeyObject {
  let derived = prepared.macKeys.get(purpose)
  if (!derived) {
    derived = createSecretKey(createHmac('sha256', prepared.key).update(`triad-payments:${purpose}`).digest())
    prepared.macKeys.set(purpose, derived)
  }
  return derived
}

function openWith(prepared: PreparedKey, iv: string, tag: string, body: string, aad: string): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', prepared.key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(aad))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}

/** A sealer over `keys`, the active one first; a single Buffer is one key named by its hex. */
export function createSealer(keys: Buffer | readonly VaultKey[]): Sealer {
  const list = Buffer.isBuffer(keys) ? [{ id: vaultKeyIdOf(keys.toString('hex')), key: keys }] : keys
  const prepared = list.map(prepare)
  const active = prepared[0]
  if (!active) throw new RangeError('a sealer needs at least one key')
  const byId = new Map(prepared.map((item) => [item.id, item]))
  return {
    activeKeyId: active.id,
    knows: (id) => byId.has(id),
    seal(plain, aad) {
      const iv = pooledRandomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', active.key, iv)
      cipher.setAAD(Buffer.from(aad))
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [VERSION, active.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
    },
    open(sealed, aad) {
      const parts = sealed.split('.')
      if (parts[0] === VERSION && parts.length === 5) {
        const [, id = '', iv = '', tag = '', body = ''] = parts
        const key = byId.get(id)
        return key && iv && tag ? openWith(key, iv, tag, body, aad) : undefined
      }
      if (parts[0] === LEGACY_VERSION && parts.length === 4) {
        const [, iv = '', tag = '', body = ''] = parts
        if (!iv || !tag) return undefined
        for (const key of prepared) {
          const plain = openWith(key, iv, tag, body, aad)
          if (plain !== undefined) return plain
        }
      }
      return undefined
    },
    keyIdOf(sealed) {
      const parts = sealed.split('.')
      if (parts[0] === VERSION && parts.length === 5) return parts[1]
      if (parts[0] === LEGACY_VERSION && parts.length === 4) return LEGACY_KEY_ID
      return undefined
    },
    mac(purpose, data) {
      return createHmac('sha256', macKey(active, purpose)).update(data).digest('base64url')
    },
    macMatches(purpose, data, mac) {
      return prepared.some((key) => safeEqual(mac, createHmac('sha256', macKey(key, purpose)).update(data).digest('base64url')))
    },
  }
}
