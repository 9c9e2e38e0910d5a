import type { Executor } from '../../db.ts'
import type { HandoffsTable, HandoffsTables } from './handoffs.table.ts'

type DbExecutor = Executor<HandoffsTables>

export async function insertHandoff(db: DbExecutor, row: HandoffsTable): Promise<void> {
  await db.insertInto('authn_handoffs').values(row).execute()
}

/** Reads and deletes a hand-off; the conditional delete makes a replayed code fail. */
export async function takeHandoff(db: DbExecutor, codeHash: string): Promise<HandoffsTable | undefined> {
  const row = await db
    .selectFrom('authn_handoffs')
    .select(['code_hash', 'eperson_uuid', 'method', 'expires_at', 'special_groups'])
    .where('code_hash', '=', codeHash)
    .executeTakeFirst()
  if (!row) return undefined
  const deleted = await db.deleteFrom('authn_handoffs').where('code_hash', '=', codeHash).executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0 ? row : undefined
}

export async function deleteExpiredHandoffs(db: DbExecutor, now: string): Promise<void> {
  await db.deleteFrom('authn_handoffs').where('expires_at', '<=', now).execute()
}
