import { LRUCache } from 'lru-cache'
import type { Clock } from '../clock.ts'
import type { Database } from './create-db.ts'
import { sqliteDirect } from './node-sqlite-dialect.ts'

export interface ReadVersion {
  local: number
  external: number
}

/**
 * A cache of values read from SQLite that this process's own writes invalidate at once: an
 * entry is used only while no statement that may write has run on the connection since it was
 * read. Writes by other processes on the same file (a second instance, the CLI) are noticed
 * through SQLite's data_version, asked at most once per `maxLagMs` (0: on every lookup, which
 * costs a read lock like a small query). PostgreSQL: every lookup misses.
 */
export function createReadCache<V>(database: Pick<Database, 'db' | 'dialect'>, options: { clock: Clock; maxLagMs: number; maxEntries?: number }) {
  const direct = database.dialect === 'sqlite' ? sqliteDirect(database.db) : undefined
  const entries = new LRUCache<string, { version: ReadVersion; value: V }>({ max: options.maxEntries ?? 10_000 })
  let external = 0
  let externalCheckedAt = Number.NEGATIVE_INFINITY

  return {
    /**
     * The version to read under, or undefined when the cache cannot be used now (PostgreSQL,
     * or a transaction is open on the connection: its writes are not committed yet). Take it
     * just before the read: a write in between only makes the entry look older than it is.
     */
    version(): ReadVersion | undefined {
      if (!direct || direct.inTransaction) return undefined
      const now = options.clock.now().getTime()
      if (options.maxLagMs === 0 || now - externalCheckedAt >= options.maxLagMs) {
        external = direct.externalVersion()
        externalCheckedAt = now
      }
      return { local: direct.localWrites, external }
    },
    get(key: string, version: ReadVersion): V | undefined {
      const entry = entries.get(key)
      return entry && entry.version.local === version.local && entry.version.external === version.external ? entry.value : undefined
    },
    set(key: string, version: ReadVersion, value: V): void {
      entries.set(key, { version, value })
    },
  }
}
