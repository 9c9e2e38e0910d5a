import type { Executor } from '../../db.ts'
import type { SamlAssertionsTable, SamlIdentitiesTable, SamlNameIdsTable, SamlRequestsTable, SamlTables } from './saml.table.ts'

type DbExecutor = Executor<SamlTables>

export async function insertRequest(db: DbExecutor, row: SamlRequestsTable): Promise<void> {
  await db.insertInto('authn_saml_requests').values(row).execute()
}

export async function findRequest(db: DbExecutor, providerId: string, requestId: string): Promise<SamlRequestsTable | undefined> {
  return db
    .selectFrom('authn_saml_requests')
    .select(['request_id', 'provider_id', 'redirect_url', 'expires_at'])
    .where('request_id', '=', requestId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst()
}

/** Deletes a request; true only for the one caller that deleted it (a response is consumed once, on any instance). */
export async function takeRequest(db: DbExecutor, providerId: string, requestId: string): Promise<boolean> {
  const deleted = await db.deleteFrom('authn_saml_requests').where('request_id', '=', requestId).where('provider_id', '=', providerId).executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0
}

/** Records an assertion as used; false when it was used before (the primary key refuses it). */
export async function recordAssertion(db: DbExecutor, row: SamlAssertionsTable): Promise<boolean> {
  const inserted = await db
    .insertInto('authn_saml_assertions')
    .values(row)
    .onConflict((conflict) => conflict.columns(['provider_id', 'assertion_id']).doNothing())
    .executeTakeFirst()
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0
}

export async function deleteExpired(db: DbExecutor, now: string): Promise<void> {
  await db.deleteFrom('authn_saml_requests').where('expires_at', '<=', now).execute()
  await db.deleteFrom('authn_saml_assertions').where('expires_at', '<=', now).execute()
}

export async function findIdentity(db: DbExecutor, providerId: string, persistentId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('authn_saml_identities')
    .select('eperson_uuid')
    .where('provider_id', '=', providerId)
    .where('persistent_id', '=', persistentId)
    .executeTakeFirst()
  return row?.eperson_uuid
}

export async function linkIdentity(db: DbExecutor, row: SamlIdentitiesTable): Promise<void> {
  await db
    .insertInto('authn_saml_identities')
    .values(row)
    .onConflict((conflict) => conflict.columns(['provider_id', 'persistent_id']).doNothing())
    .execute()
}

/** Remembers a login's NameID (until its session could last no longer). */
export async function recordNameId(db: DbExecutor, row: SamlNameIdsTable, now: string): Promise<void> {
  await db.deleteFrom('authn_saml_name_ids').where('expires_at', '<=', now).execute()
  await db
    .insertInto('authn_saml_name_ids')
    .values(row)
    .onConflict((conflict) =>
      conflict
        .columns(['provider_id', 'name_id', 'eperson_uuid'])
        .doUpdateSet({ expires_at: row.expires_at, created_at: row.created_at, session_index: row.session_index, name_id_format: row.name_id_format }),
    )
    .execute()
}

/** The epersons a provider's NameID was given to (and forgets it: the sessions it names end). */
export async function takeNameId(db: DbExecutor, providerId: string, nameId: string): Promise<string[]> {
  const rows = await db.selectFrom('authn_saml_name_ids').select('eperson_uuid').where('provider_id', '=', providerId).where('name_id', '=', nameId).execute()
  await db.deleteFrom('authn_saml_name_ids').where('provider_id', '=', providerId).where('name_id', '=', nameId).execute()
  return rows.map((row) => row.eperson_uuid)
}

/** The eperson's most recent SAML login still on record: whom to name in a logout started here. */
export async function latestNameId(db: DbExecutor, epersonUuid: string, now: string): Promise<SamlNameIdsTable | undefined> {
  return db
    .selectFrom('authn_saml_name_ids')
    .select(['provider_id', 'name_id', 'name_id_format', 'session_index', 'eperson_uuid', 'created_at', 'expires_at'])
    .where('eperson_uuid', '=', epersonUuid)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .executeTakeFirst()
}
