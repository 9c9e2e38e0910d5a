import type { AppsTable, PaymentsDb } from '../../tables.ts'

// The key hash is a secret-bearing column: it is written here and compared in SQL, never selected.
const PUBLIC_COLUMNS = ['id', 'name', 'created'] as const

export type AppRow = Pick<AppsTable, 'id' | 'name' | 'created'>

export async function insertApp(db: PaymentsDb, row: AppsTable): Promise<void> {
  await db.insertInto('payments_apps').values(row).execute()
}

export async function findAppByKeyHash(db: PaymentsDb, keyHash: string): Promise<AppRow | undefined> {
  return db.selectFrom('payments_apps').select(PUBLIC_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst()
}

export async function findAppById(db: PaymentsDb, id: string): Promise<AppRow | undefined> {
  return db.selectFrom('payments_apps').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst()
}
