import { createHash } from 'node:crypto'
import type { Clock } from '../clock.ts'
import type { SecretStore, SecretsDocument, StoredKey } from './secrets-file.ts'

/**
 * A named secret with its keys: the one that signs or seals now (`active`) and the older ones
 * that still verify or open what they made, until they are retired. Keys come from the
 * environment (supplied by the operator; they take precedence) and from the secrets file
 * (generated on first start, or added by a rotation).
 *
 * Running instances learn of a key added to the file by another process in two ways: each
 * re-checks the file at most every `checkEveryMs` (a `stat`, and a read only when it changed),
 * so new seals and signatures move to the newest key within that time; and a caller that meets
 * an id it does not know calls `refresh()` at once.
 */

export interface Key {
  id: string
  secret: string
  source: 'environment' | 'file'
  /** When it was generated or stored; unknown for keys from the environment. */
  created: string | undefined
}

export interface KeySet {
  /** The key that signs or seals: the first from the environment, else the newest in the file. */
  active: Key
  /** Every usable key, the active one first. */
  keys: readonly Key[]
  find(id: string): Key | undefined
  /** Changes whenever the set of keys changes (to drop caches built on retired keys). */
  version: number
}

export interface KeyringOptions {
  /** The secret's name in the file: `<service>.<purpose>`, e.g. `payments.vault`. */
  name: string
  /** The variable that supplies it, for messages. */
  envVar: string
  /** Keys from the environment, the one to use first; empty when the variable is unset. */
  supplied: readonly string[]
  /** A fresh secret, for the first start and for rotations. */
  generate: () => string
}

export interface Keyring {
  readonly name: string
  readonly envVar: string
  /** True when the active key came from outside Triad: the environment, or a secrets file the operator named. */
  supplied(): boolean
  /** Reads the file, generating the first key into it when neither the environment nor the file has one. */
  init(): Promise<{ generated: boolean }>
  /** The keys, re-checked against the file when the last check is older than the check interval. */
  current(): Promise<KeySet>
  /** The keys as the file holds them now (after a miss: an id nobody here knows yet). */
  refresh(): Promise<KeySet>
  /** Adds a freshly generated key to the file; it becomes the active one unless the environment supplies a key. */
  rotate(): Promise<Key>
  /** Keeps an existing secret (moved out of a database table) in the file, unless it is there already. */
  adopt(secret: string, created: string): Promise<Key>
  /** Removes keys from the file. */
  retire(ids: readonly string[]): Promise<void>
}

/** A key's id: derived from the secret, so every instance names it alike, and it reveals nothing usable. */
export function keyIdOf(secret: string): string {
  return createHash('sha256').update('triad/key-id\0').update(secret).digest('hex').slice(0, 16)
}

export interface Secrets {
  store: SecretStore
  keyring(options: KeyringOptions): Keyring
  /** The keyrings whose active key was not supplied from outside (for the production warning). */
  unsupplied(): Array<{ name: string; envVar: string }>
}

/** The secrets of one process: the store, and the keyrings services ask for by name. */
export function createSecrets(store: SecretStore, clock: Clock, options: { checkEveryMs?: number } = {}): Secrets {
  const checkEveryMs = options.checkEveryMs ?? 5_000
  const keyrings = new Map<string, Keyring>()
  return {
    store,
    keyring(keyringOptions) {
      const known = keyrings.get(keyringOptions.name)
      if (known) return known
      const keyring = createKeyring(store, clock, checkEveryMs, keyringOptions)
      keyrings.set(keyringOptions.name, keyring)
      return keyring
    },
    unsupplied: () => [...keyrings.values()].filter((keyring) => !keyring.supplied()).map(({ name, envVar }) => ({ name, envVar })),
  }
}

function createKeyring(store: SecretStore, clock: Clock, checkEveryMs: number, options: KeyringOptions): Keyring {
  const fromEnvironment: Key[] = options.supplied.map((secret) => ({ id: keyIdOf(secret), secret, source: 'environment', created: undefined }))
  let set: KeySet | undefined
  let signature = ''
  let checkedAt = Number.NEGATIVE_INFINITY
  let version = 0

  function build(document: SecretsDocument): KeySet {
    const stored = document.secrets[options.name] ?? []
    const fromFile: Key[] = stored
      .map((key) => ({ id: keyIdOf(key.secret), secret: key.secret, source: 'file' as const, created: key.created }))
      .filter((key) => !fromEnvironment.some((env) => env.id === key.id))
      .reverse()
    const keys = [...fromEnvironment, ...fromFile]
    const active = keys[0]
    if (!active) throw new Error(`no ${options.envVar} is set and the secrets file has no "${options.name}" key`)
    const nextSignature = keys.map((key) => key.id).join(',')
    if (nextSignature !== signature) {
      signature = nextSignature
      version++
    }
    const byId = new Map(keys.map((key) => [key.id, key]))
    return { active, keys, find: (id) => byId.get(id), version }
  }

  async function reload(): Promise<KeySet> {
    checkedAt = clock.now().getTime()
    set = build(await store.load())
    return set
  }

  const withKey = (document: SecretsDocument, key: StoredKey): SecretsDocument => ({
    secrets: { ...document.secrets, [options.name]: [...(document.secrets[options.name] ?? []), key] },
  })

  async function add(secret: string, created: string): Promise<Key> {
    const id = keyIdOf(secret)
    const document = await store.update((current) => ((current.secrets[options.name] ?? []).some((key) => keyIdOf(key.secret) === id) ? undefined : withKey(current, { id, secret, created })))
    set = build(document)
    checkedAt = clock.now().getTime()
    return set.find(id) ?? { id, secret, source: 'file', created }
  }

  return {
    name: options.name,
    envVar: options.envVar,
    supplied: () => fromEnvironment.length > 0 || store.chosen,
    async init() {
      if (fromEnvironment.length > 0) {
        await reload()
        return { generated: false }
      }
      const document = await store.load()
      if ((document.secrets[options.name] ?? []).length > 0) {
        await reload()
        return { generated: false }
      }
      // Under the file's lock, and only if still absent: another process starting at the same
      // moment may have written its key first, and then that one is used.
      const secret = options.generate()
      const id = keyIdOf(secret)
      const created = clock.now().toISOString()
      const after = await store.update((current) => ((current.secrets[options.name] ?? []).length > 0 ? undefined : withKey(current, { id, secret, created })))
      set = build(after)
      checkedAt = clock.now().getTime()
      return { generated: set.active.id === id }
    },
    async current() {
      const now = clock.now().getTime()
      if (set === undefined || now - checkedAt >= checkEveryMs || now < checkedAt) return reload()
      return set
    },
    refresh: reload,
    rotate: () => add(options.generate(), clock.now().toISOString()),
    adopt: (secret, created) => add(secret, created),
    async retire(ids) {
      const document = await store.update((current) => {
        const keys = current.secrets[options.name] ?? []
        const kept = keys.filter((key) => !ids.includes(keyIdOf(key.secret)))
        return kept.length === keys.length ? undefined : { secrets: { ...current.secrets, [options.name]: kept } }
      })
      set = build(document)
      checkedAt = clock.now().getTime()
    },
  }
}
