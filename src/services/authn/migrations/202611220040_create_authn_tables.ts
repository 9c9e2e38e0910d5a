import type { Kysely } from 'kysely'

// Frozen: never edit once shipped; add a new migration instead.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('authn_settings')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('value', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('authn_epersons')
    .addColumn('uuid', 'text', (col) => col.primaryKey())
    .addColumn('email', 'text', (col) => col.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('can_log_in', 'integer', (col) => col.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('last_active', 'text')
    .execute()

  await db.schema
    .createTable('authn_groups')
    .addColumn('uuid', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('permanent', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('authn_group_members')
    .addColumn('group_uuid', 'text', (col) => col.notNull().references('authn_groups.uuid').onDelete('cascade'))
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addPrimaryKeyConstraint('authn_group_members_pk', ['group_uuid', 'eperson_uuid'])
    .execute()
  await db.schema.createIndex('authn_group_members_eperson').on('authn_group_members').column('eperson_uuid').execute()

  await db.schema
    .createTable('authn_sessions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('method', 'text', (col) => col.notNull())
    .addColumn('special_groups', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .addColumn('current_jti', 'text', (col) => col.notNull())
    .addColumn('current_iat', 'bigint', (col) => col.notNull())
    .addColumn('current_exp', 'bigint', (col) => col.notNull())
    .addColumn('previous_jti', 'text')
    .addColumn('previous_valid_until', 'text')
    .execute()
  await db.schema.createIndex('authn_sessions_eperson').on('authn_sessions').column('eperson_uuid').execute()

  await db.schema
    .createTable('authn_login_failures')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('last_failure_at', 'text', (col) => col.notNull())
    .addColumn('blocked_until', 'text')
    .execute()

  await db.schema
    .createTable('authn_oidc_flows')
    .addColumn('state_hash', 'text', (col) => col.primaryKey())
    .addColumn('code_verifier', 'text', (col) => col.notNull())
    .addColumn('nonce', 'text', (col) => col.notNull())
    .addColumn('redirect_url', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('authn_handoffs')
    .addColumn('code_hash', 'text', (col) => col.primaryKey())
    .addColumn('eperson_uuid', 'text', (col) => col.notNull().references('authn_epersons.uuid').onDelete('cascade'))
    .addColumn('method', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are typed against no app schema.
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'authn_handoffs',
    'authn_oidc_flows',
    'authn_login_failures',
    'authn_sessions',
    'authn_group_members',
    'authn_groups',
    'authn_epersons',
    'authn_settings',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
