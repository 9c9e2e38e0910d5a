import type { PaymentsDb } from '../tables.ts'

export async function insertOutboxMail(db: PaymentsDb, row: { id: string; recipient: string; subject: string; body: string; created: string }): Promise<void> {
  await db.insertInto('payments_outbox').values(row).execute()
}
