import type { Executor } from '../../db.ts'
import type { OidcFlowsTable, OidcTables } from './oidc.table.ts'

type DbExecutor = Executor<OidcTables>

export async function insertFlow(db: DbExecutor, row: OidcFlowsTable): Promise<void> {
  await db.insertInto('authn_oidc_flows').values(row).execute()
}

/** Reads and deletes a flow in one go: a state is good for one callback only. */
export async function takeFlow(db: DbExecutor, stateHash: string): Promise<OidcFlowsTable | undefined> {
  const row = await db
    .selectFrom('authn_oidc_flows')
    .select(['state_hash', 'code_verifier', 'nonce', 'redirect_url', 'expires_at'])
    .where('state_hash', '=', stateHash)
    .executeTakeFirst()
  if (!row) return undefined
  const deleted = await db.deleteFrom('authn_oidc_flows').where('state_hash', '=', stateHash).executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0 ? row : undefined
}

export async function deleteExpired(db: DbExecutor, now: string): Promise<void> {
  await db.deleteFrom('authn_oidc_flows').where('expires_at', '<=', now).execute()
}
