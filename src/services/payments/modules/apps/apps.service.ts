import { createHash } from 'node:crypto'
import type { Clock } from '../../../../core/clock.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { PaymentsDb } from '../../tables.ts'
import { type AppRow, findAppById, findAppByKeyHash, insertApp } from './apps.repository.ts'
import type { Identity } from './apps.schemas.ts'

/**
 * API keys are random UUIDs (122 random bits), so a fast unsalted SHA-256 is enough to store
 * them: nobody can brute-force that space, and a lookup by hash stays one indexed query.
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

export function toIdentity(row: AppRow): Identity {
  return { id: row.id, ...(row.name === null ? {} : { name: row.name }), created: row.created }
}

/** The app with this id, or undefined: what the merchants module asks when it adds an app to a merchant. */
export function findApp(db: PaymentsDb, id: string): Promise<AppRow | undefined> {
  return findAppById(db, id)
}

const CACHE_LIMIT = 10_000

export function createAppsService(deps: { db: PaymentsDb; clock: Clock; ids: IdGenerator }) {
  // A key never changes its app and apps are never deleted, so a found key can be remembered
  // for the life of the process (bounded); unknown keys are not cached.
  const byKeyHash = new Map<string, AppRow>()

  return {
    async create(name: string | undefined) {
      const key = deps.ids.uuid()
      const row = { id: deps.ids.timeOrdered(), name: name ?? null, key_hash: hashKey(key), created: deps.clock.now().toISOString() }
      await insertApp(deps.db, row)
      return { id: row.id, ...(name === undefined ? {} : { name }), key }
    },

    /** The app whose key this is, or undefined. */
    async authenticate(key: string): Promise<AppRow | undefined> {
      const keyHash = hashKey(key)
      const cached = byKeyHash.get(keyHash)
      if (cached) return cached
      const row = await findAppByKeyHash(deps.db, keyHash)
      if (row) {
        if (byKeyHash.size >= CACHE_LIMIT) byKeyHash.clear()
        byKeyHash.set(keyHash, row)
      }
      return row
    },
  }
}

export type AppsService = ReturnType<typeof createAppsService>
