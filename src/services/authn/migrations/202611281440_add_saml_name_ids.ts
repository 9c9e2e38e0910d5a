import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.

/**
 * Issue 28 item 5: the NameIDs providers gave at each SAML login, so a LogoutRequest from the
 * provider (which names the person by that NameID) can end their sessions, and a logout started
 * here can name the person to the provider.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('authn_saml_name_ids')
    .addColumn('provider_id', 'text', (col) => col.notNull())
    .addColumn('name_id', 'text', (col) => col.notNull())
    .addColumn('name_id_format', 'text')
    .addColumn('session_index', 'text')
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('authn_saml_name_ids_pk', ['provider_id', 'name_id', 'eperson_uuid'])
    .execute()
  await db.schema.createIndex('authn_saml_name_ids_expiry').on('authn_saml_name_ids').column('expires_at').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('authn_saml_name_ids').execute()
}
