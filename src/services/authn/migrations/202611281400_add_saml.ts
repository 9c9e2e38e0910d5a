import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.

/**
 * Issue 28: SAML sign-on. The AuthnRequests this deployment sent (any instance may receive the
 * response), the assertions already used (replays), the persistent ids (eduPersonTargetedID,
 * pairwise-id) linked to epersons, and the special groups a federated hand-off carries.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('authn_saml_requests')
    .addColumn('request_id', 'text', (col) => col.primaryKey())
    .addColumn('provider_id', 'text', (col) => col.notNull())
    .addColumn('redirect_url', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('authn_saml_requests_expiry').on('authn_saml_requests').column('expires_at').execute()

  await db.schema
    .createTable('authn_saml_assertions')
    .addColumn('provider_id', 'text', (col) => col.notNull())
    .addColumn('assertion_id', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('authn_saml_assertions_pk', ['provider_id', 'assertion_id'])
    .execute()
  await db.schema.createIndex('authn_saml_assertions_expiry').on('authn_saml_assertions').column('expires_at').execute()

  await db.schema
    .createTable('authn_saml_identities')
    .addColumn('provider_id', 'text', (col) => col.notNull())
    .addColumn('persistent_id', 'text', (col) => col.notNull())
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('authn_saml_identities_pk', ['provider_id', 'persistent_id'])
    .execute()

  await db.schema.alterTable('authn_handoffs').addColumn('special_groups', 'text').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authn_handoffs').dropColumn('special_groups').execute()
  await db.schema.dropTable('authn_saml_identities').execute()
  await db.schema.dropTable('authn_saml_assertions').execute()
  await db.schema.dropTable('authn_saml_requests').execute()
}
