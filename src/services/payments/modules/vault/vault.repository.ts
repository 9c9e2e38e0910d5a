import { compiledOnce } from './compiled-query.ts'
import type { VaultDb, VaultTokensTable } from './vault.table.ts'

// All SQL of the vault. Sealed columns are selected only where they are about to be opened.

export async function findStoredSecret(db: VaultDb, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('payments_vault_keys').select('secret').where('id', '=', id).executeTakeFirst()
  return row?.secret
}

/** Stores a generated secret unless another instance stored one first (then that one wins). */
export async function insertSecretIfAbsent(db: VaultDb, id: string, secret: string, created: string): Promise<void> {
  await db
    .insertInto('payments_vault_keys')
    .values({ id, secret, created })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
}

const insertTokenQuery = compiledOnce((db: VaultDb, v: Record<keyof VaultTokensTable, never>) =>
  db.insertInto('payments_vault_tokens').values({
    token_hash: v.token_hash,
    type: v.type,
    sealed: v.sealed,
    created: v.created,
    expires: v.expires,
    used: v.used,
  }),
)

export async function insertToken(db: VaultDb, row: VaultTokensTable): Promise<void> {
  await insertTokenQuery(db, row)
}

const findTokenQuery = compiledOnce((db: VaultDb, v: Record<'hash', never>) =>
  db.selectFrom('payments_vault_tokens').select(['token_hash', 'type', 'sealed', 'expires', 'used']).where('token_hash', '=', v.hash),
)

export async function findToken(db: VaultDb, tokenHash: string) {
  return (await findTokenQuery(db, { hash: tokenHash })).rows[0]
}

/** Marks an unused, unexpired token used; false when another request spent it first (or it expired). */
export async function spendToken(db: VaultDb, tokenHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('payments_vault_tokens')
    .set({ used: 1 })
    .where('token_hash', '=', tokenHash)
    .where('used', '=', 0)
    .where('expires', '>', now)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function deleteTokensExpiredBefore(db: VaultDb, now: string): Promise<void> {
  await db.deleteFrom('payments_vault_tokens').where('expires', '<=', now).execute()
}

export async function insertCard(db: VaultDb, row: { id: string; sealed: string; created: string }): Promise<void> {
  await db.insertInto('payments_vault_cards').values(row).execute()
}

export async function findCardSealed(db: VaultDb, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('payments_vault_cards').select('sealed').where('id', '=', id).executeTakeFirst()
  return row?.sealed
}
