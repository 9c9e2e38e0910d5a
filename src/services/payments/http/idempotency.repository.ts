import type { PaymentsDb } from '../tables.ts'

/** A stored answer to a request sent with an `Idempotency-Key`. */
export interface StoredAnswer {
  fingerprint: string
  status: number
  contentType: string | null
  body: string | null
}

/**
 * The live answer stored under `key` for `appId`: one written before `expiredBefore` has lived
 * out its time and counts as none. Rows without a status were left by earlier versions, which
 * marked a key "in progress" before running the request: they stand for nothing that committed.
 */
export async function findAnswer(db: PaymentsDb, appId: string, key: string, expiredBefore: string): Promise<StoredAnswer | undefined> {
  const row = await db
    .selectFrom('payments_idempotency')
    .select(['fingerprint', 'status', 'content_type', 'body'])
    .where('app_id', '=', appId)
    .where('key', '=', key)
    .where('created', '>=', expiredBefore)
    .where('status', 'is not', null)
    .executeTakeFirst()
  if (!row || row.status === null) return undefined
  return { fingerprint: row.fingerprint, status: row.status, contentType: row.content_type, body: row.body }
}

/**
 * Stores the answer under `key`, in `db`'s transaction when it is one: false when a live answer
 * is there already (another request with the key committed first; on PostgreSQL this waits for
 * a request still holding the key to commit or roll back). An expired or incomplete row is
 * replaced.
 */
export async function storeAnswer(
  db: PaymentsDb,
  entry: { appId: string; key: string; created: string; expiredBefore: string } & StoredAnswer,
): Promise<boolean> {
  const values = { fingerprint: entry.fingerprint, status: entry.status, content_type: entry.contentType, body: entry.body, created: entry.created }
  const result = await db
    .insertInto('payments_idempotency')
    .values({ app_id: entry.appId, key: entry.key, ...values })
    .onConflict((conflict) =>
      conflict
        .columns(['app_id', 'key'])
        .doUpdateSet(values)
        .where((existing) => existing.or([existing('payments_idempotency.created', '<', entry.expiredBefore), existing('payments_idempotency.status', 'is', null)])),
    )
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

/** Forgets answers stored before `expiredBefore`. */
export async function pruneAnswers(db: PaymentsDb, expiredBefore: string): Promise<void> {
  await db.deleteFrom('payments_idempotency').where('created', '<', expiredBefore).execute()
}
