import { createHash } from 'node:crypto'
import type { Clock } from '../../../../core/clock.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { PaymentsDb } from '../../tables.ts'
import { type AppRow, createAppByKeyHash, findAppById, insertApp } from './apps.repository.ts'
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

export function createAppsService(deps: { db: PaymentsDb; clock: Clock; ids: IdGenerator }) {
  const appByKeyHash = createAppByKeyHash(deps.db)

  return {
    async create(name: string | undefined) {
      const key = deps.ids.uuid()
      const row = { id: deps.ids.timeOrdered(), name: name ?? null, key_hash: hashKey(key), created: deps.clock.now().toISOString() }
      await insertApp(deps.db, row)
      return { id: row.id, ...(name === undefined ? {} : { name }), key }
    },

    /** The app whose key this is, or undefined. Not `async`: the repository's promise is returned as is. */
    authenticate(key: string): Promise<AppRow | undefined> {
      return appByKeyHash(hashKey(key))
    },
  }
}

export type AppsService = ReturnType<typeof createAppsService>
