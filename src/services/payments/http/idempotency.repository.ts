import type { DialectName } from '../../../core/db/create-db.ts'
import { prepared } from '../../../core/db/prepared.ts'
import type { PaymentsDb, PaymentsTables } from '../tables.ts'

/** A stored answer to a request sent with an `Idempotency-Key`. */
export interface StoredAnswer {
  fingerprint: string
  status: number
  contentType: string | null
  body: string | null
}

const liveAnswer = prepared<PaymentsTables, 'appId' | 'key' | 'expiredBefore', { fingerprint: string; status: number | null; content_type: string | null; body: string | null }>(
  (db, p) =>
    db
      .selectFrom('payments_idempotency')
      .select(['fingerprint', 'status', 'content_type', 'body'])
      .where('app_id', '=', p.appId)
      .where('key', '=', p.key)
      .where('created', '>=', p.expiredBefore)
      .where('status', 'is not', null),
)

/**
 * The live answer stored under `key` for `appId`: one written before `expiredBefore` has lived
 * out its time and counts as none. Rows without a status were left by earlier versions, which
 * marked a key "in progress" before running the request: they stand for nothing that committed.
 */
export async function findAnswer(db: PaymentsDb, dialect: DialectName, appId: string, key: string, expiredBefore: string): Promise<StoredAnswer | undefined> {
  const [row] = (await liveAnswer(db, dialect, { appId, key, expiredBefore })).rows
  if (!row || row.status === null) return undefined
  return { fingerprint: row.fingerprint, status: row.status, contentType: row.content_type, body: row.body }
}

type AnswerKey = 'appId' | 'key' | 'fingerprint' | 'status' | 'contentType' | 'body' | 'created' | 'expiredBefore'

const upsertAnswer = prepared<PaymentsTables, AnswerKey, never>((db, p) => {
  const values = { fingerprint: p.fingerprint, status: p.status, content_type: p.contentType, body: p.body, created: p.created }
  return db
    .insertInto('payments_idempotency')
    .values({ app_id: p.appId, key: p.key, ...values })
    .onConflict((conflict) =>
      conflict
        .columns(['app_id', 'key'])
        .doUpdateSet(values)
        .where((existing) => existing.or([existing('payments_idempotency.created', '<', p.expiredBefore), existing('payments_idempotency.status', 'is', null)])),
    )
})

/**
 * Stores the answer under `key`, in `db`'s transaction when it is one: false when a live answer
 * is there already (another request with the key committed first; on PostgreSQL this waits for
 * a request still holding the key to commit or roll back). An expired or incomplete row is
 * replaced.
 */
export async function storeAnswer(
  db: PaymentsDb,
  dialect: DialectName,
  entry: { appId: string; key: string; created: string; expiredBefore: string } & StoredAnswer,
): Promise<boolean> {
  const { numAffectedRows } = await upsertAnswer(db, dialect, entry)
  return Number(numAffectedRows ?? 0n) > 0
}

/** Forgets answers stored before `expiredBefore`. */
export async function pruneAnswers(db: PaymentsDb, expiredBefore: string): Promise<void> {
  await db.deleteFrom('payments_idempotency').where('created', '<', expiredBefore).execute()
}
