import { LRUCache } from 'lru-cache'
import type { AppsTable, PaymentsDb } from '../../tables.ts'

// The key hash is a secret-bearing column: it is written here and compared in SQL, never selected.
const PUBLIC_COLUMNS = ['id', 'name', 'created'] as const

export type AppRow = Pick<AppsTable, 'id' | 'name' | 'created'>

export async function insertApp(db: PaymentsDb, row: AppsTable): Promise<void> {
  await db.insertInto('payments_apps').values(row).execute()
}

async function findAppByKeyHash(db: PaymentsDb, keyHash: string): Promise<AppRow | undefined> {
  return db.selectFrom('payments_apps').select(PUBLIC_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst()
}

export async function findAppById(db: PaymentsDb, id: string): Promise<AppRow | undefined> {
  return db.selectFrom('payments_apps').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst()
}

/**
 * The app of a key hash, remembered: a key never changes its app and apps are never deleted,
 * so a found key can be kept for the life of the process (the 10 000 most recently used);
 * unknown keys are not kept. Every merchant API request asks this.
 */
export function createAppByKeyHash(db: PaymentsDb, options: { max?: number } = {}) {
  const byKeyHash = new LRUCache<string, AppRow>({ max: options.max ?? 10_000 })
  return async (keyHash: string): Promise<AppRow | undefined> => {
    const cached = byKeyHash.get(keyHash)
    if (cached) return cached
    const row = await findAppByKeyHash(db, keyHash)
    if (row) byKeyHash.set(keyHash, row)
    return row
  }
}
