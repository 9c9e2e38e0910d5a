import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

/**
 * Where generated secrets live: a JSON file outside the database (TRIAD_SECRETS_FILE), so a
 * database backup alone holds no key (PCI DSS 3.5: keys apart from the data they protect).
 * This module knows files, not services: a document maps a secret's name (`payments.vault`)
 * to its keys, oldest first.
 *
 * Writes are atomic (a temporary file renamed over the old one) and serialised between
 * processes by a lock file created exclusively (`wx`); every change re-reads the file under
 * the lock, so two processes starting together on a fresh file end with the same secrets.
 */

export interface StoredKey {
  /** Derived from the secret (keyIdOf in keyring.ts, which recomputes it on reading), so every process names the same key alike. */
  id: string
  secret: string
  /** ISO 8601; when the key was generated or stored. */
  created: string
}

export interface SecretsDocument {
  secrets: Record<string, StoredKey[]>
}

export interface SecretStore {
  /** The file's path; undefined for a store kept in memory (tests). */
  readonly path: string | undefined
  /** True when the operator named the file (TRIAD_SECRETS_FILE), i.e. chose to keep it apart from the data. */
  readonly chosen: boolean
  /** The document as it is now (the file is re-read only when it changed on disk). */
  load(): Promise<SecretsDocument>
  /**
   * Changes the document under the lock: `change` gets what is on disk now and returns the new
   * document, or undefined to leave it as it is. Returns the document after the change.
   */
  update(change: (current: SecretsDocument) => SecretsDocument | undefined): Promise<SecretsDocument>
}

const FORMAT = 'triad-secrets/1'
const LOCK_STALE_MS = 30_000
const LOCK_WAIT_MS = 15_000
const LOCK_RETRY_MS = 15

const empty = (): SecretsDocument => ({ secrets: {} })

function parse(path: string, text: string): SecretsDocument {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new Error(`the secrets file ${path} is not valid JSON`)
  }
  const document = value as { format?: unknown; secrets?: unknown }
  if (document.format !== FORMAT || typeof document.secrets !== 'object' || document.secrets === null) {
    throw new Error(`the secrets file ${path} is not a Triad secrets file (expected "format": "${FORMAT}")`)
  }
  const secrets: Record<string, StoredKey[]> = {}
  for (const [name, keys] of Object.entries(document.secrets as Record<string, unknown>)) {
    if (!Array.isArray(keys) || !keys.every((key) => typeof key?.id === 'string' && typeof key?.secret === 'string' && typeof key?.created === 'string')) {
      throw new Error(`the secrets file ${path}: "${name}" must be a list of {id, secret, created}`)
    }
    secrets[name] = (keys as StoredKey[]).map(({ id, secret, created }) => ({ id, secret, created }))
  }
  return { secrets }
}

function render(document: SecretsDocument): string {
  return `${JSON.stringify({ format: FORMAT, secrets: document.secrets }, null, 2)}\n`
}

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code
}

/** The secrets file at `path` (created with mode 0600, in a directory of mode 0700, on first change). */
export function openSecretsFile(path: string, options: { chosen?: boolean } = {}): SecretStore {
  let cached: { document: SecretsDocument; signature: string } | undefined

  async function signature(): Promise<string | undefined> {
    try {
      const info = await stat(path)
      return `${info.ino}:${info.size}:${info.mtimeMs}`
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined
      throw error
    }
  }

  async function readNow(): Promise<SecretsDocument> {
    try {
      return parse(path, await readFile(path, 'utf8'))
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return empty()
      throw error
    }
  }

  async function lock(): Promise<() => Promise<void>> {
    const lockPath = `${path}.lock`
    const started = Date.now()
    for (;;) {
      try {
        const handle = await open(lockPath, 'wx', 0o600)
        await handle.writeFile(`${process.pid}\n`)
        await handle.close()
        return () => unlink(lockPath).catch(() => {})
      } catch (error) {
        if (!isErrno(error, 'EEXIST')) throw error
      }
      // A lock left by a process that died mid-change is broken after a while; a change takes milliseconds.
      const info = await stat(lockPath).catch(() => undefined)
      if (info && Date.now() - info.mtimeMs > LOCK_STALE_MS) {
        await unlink(lockPath).catch(() => {})
        continue
      }
      if (Date.now() - started > LOCK_WAIT_MS) throw new Error(`the secrets file ${path} stayed locked (${lockPath}); remove the lock file if no Triad command is running`)
      await delay(LOCK_RETRY_MS)
    }
  }

  async function write(document: SecretsDocument): Promise<void> {
    const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    const handle = await open(temporary, 'wx', 0o600)
    try {
      await handle.writeFile(render(document))
      await handle.sync()
    } finally {
      await handle.close()
    }
    try {
      await rename(temporary, path)
    } catch (error) {
      await unlink(temporary).catch(() => {})
      throw error
    }
  }

  return {
    path,
    chosen: options.chosen ?? false,
    async load() {
      const current = await signature()
      if (current === undefined) {
        cached = undefined
        return empty()
      }
      if (cached?.signature !== current) cached = { document: await readNow(), signature: current }
      return cached.document
    },
    async update(change) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      const release = await lock()
      try {
        const current = await readNow()
        const next = change(current)
        if (next === undefined) return current
        await write(next)
        cached = undefined
        return next
      } finally {
        await release()
      }
    },
  }
}

/** A store in memory: what tests give each app instead of a file (instances of one test may share it). */
export function memorySecretStore(initial: SecretsDocument = empty()): SecretStore {
  let document = structuredClone(initial)
  return {
    path: undefined,
    chosen: false,
    load: async () => document,
    async update(change) {
      const next = change(structuredClone(document))
      if (next !== undefined) document = structuredClone(next)
      return document
    },
  }
}
