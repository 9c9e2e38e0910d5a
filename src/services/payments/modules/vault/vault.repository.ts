import type { DialectName } from '../../../../core/db/create-db.ts'
import { prepared } from '../../../../core/db/prepared.ts'
import type { VaultDb } from './vault.table.ts'

// All SQL of the vault. Sealed columns are selected only where they are about to be opened.

/** Keys kept in the database by versions before the secrets file (moved out at start). */
export async function findLegacyKeys(db: VaultDb): Promise<Array<{ id: string; secret: string; created: string }>> {
  return db.selectFrom('payments_vault_keys').select(['id', 'secret', 'created']).orderBy('created').execute()
}

export async function deleteLegacyKey(db: VaultDb, id: string, secret: string): Promise<void> {
  await db.deleteFrom('payments_vault_keys').where('id', '=', id).where('secret', '=', secret).execute()
}

const markSpentQuery = prepared((db: VaultDb, v: Record<'hash' | 'expires', never>) =>
  db
    .insertInto('payments_vault_spent_tokens')
    .values({ token_hash: v.hash, expires: v.expires })
    .onConflict((oc) => oc.column('token_hash').doNothing()),
)

/** Records a token as spent; false when it was spent before (another request got there first). */
export async function markSpent(db: VaultDb, dialect: DialectName, tokenHash: string, expires: string): Promise<boolean> {
  const result = await markSpentQuery(db, dialect, { hash: tokenHash, expires })
  return Number(result.numAffectedRows ?? 0n) === 1
}

const isSpentQuery = prepared((db: VaultDb, v: Record<'hash', never>) =>
  db.selectFrom('payments_vault_spent_tokens').select('token_hash').where('token_hash', '=', v.hash),
)

export async function isSpent(db: VaultDb, dialect: DialectName, tokenHash: string): Promise<boolean> {
  return (await isSpentQuery(db, dialect, { hash: tokenHash })).rows.length > 0
}

export async function deleteSpentExpiredBefore(db: VaultDb, now: string): Promise<void> {
  await db.deleteFrom('payments_vault_spent_tokens').where('expires', '<=', now).execute()
}

const insertCardQuery = prepared((db: VaultDb, v: Record<'id' | 'sealed' | 'created', never>) =>
  db.insertInto('payments_vault_cards').values({ id: v.id, sealed: v.sealed, created: v.created }),
)

export async function insertCard(db: VaultDb, dialect: DialectName, row: { id: string; sealed: string; created: string }): Promise<void> {
  await insertCardQuery(db, dialect, row)
}

export async function findCardSealed(db: VaultDb, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('payments_vault_cards').select('sealed').where('id', '=', id).executeTakeFirst()
  return row?.sealed
}

export async function deleteCard(db: VaultDb, id: string): Promise<void> {
  await db.deleteFrom('payments_vault_cards').where('id', '=', id).execute()
}

/** One batch of stored cards after `afterId`, in id order, for re-sealing. */
export async function cardsAfter(db: VaultDb, afterId: string, limit: number): Promise<Array<{ id: string; sealed: string }>> {
  return db.selectFrom('payments_vault_cards').select(['id', 'sealed']).where('id', '>', afterId).orderBy('id').limit(limit).execute()
}

/** Replaces a card's sealed number only if it is still `before` (another process may have re-sealed or deleted it). */
export async function resealCard(db: VaultDb, id: string, before: string, after: string): Promise<boolean> {
  const result = await db.updateTable('payments_vault_cards').set({ sealed: after }).where('id', '=', id).where('sealed', '=', before).executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** How many stored cards were sealed in a layout that starts with `prefix` (`v2.<key id>.`, or `v1.`). */
export async function countCardsSealedAs(db: VaultDb, prefix: string): Promise<number> {
  const row = await db
    .selectFrom('payments_vault_cards')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('sealed', 'like', `${prefix}%`)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}
