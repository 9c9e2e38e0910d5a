import type { Executor } from '../../db.ts'
import type { EpersonRow, EpersonsTables, GroupRow, NewEpersonRow } from './epersons.table.ts'

type DbExecutor = Executor<EpersonsTables>

// Explicit column lists: the password hash is read only where a password is checked.
const PUBLIC_COLUMNS = ['uuid', 'email', 'can_log_in', 'first_name', 'last_name', 'created_at', 'last_active'] as const

export type PublicEpersonRow = Omit<EpersonRow, 'password_hash'>

export function findEpersonByUuid(db: DbExecutor, uuid: string): Promise<PublicEpersonRow | undefined> {
  return db.selectFrom('authn_epersons').select(PUBLIC_COLUMNS).where('uuid', '=', uuid).executeTakeFirst()
}

export function findEpersonByEmail(db: DbExecutor, email: string): Promise<PublicEpersonRow | undefined> {
  return db.selectFrom('authn_epersons').select(PUBLIC_COLUMNS).where('email', '=', email).executeTakeFirst()
}

export function findCredentialsByEmail(db: DbExecutor, email: string): Promise<{ uuid: string; password_hash: string | null; can_log_in: number } | undefined> {
  return db.selectFrom('authn_epersons').select(['uuid', 'password_hash', 'can_log_in']).where('email', '=', email).executeTakeFirst()
}

export function findPasswordHash(db: DbExecutor, uuid: string): Promise<{ password_hash: string | null } | undefined> {
  return db.selectFrom('authn_epersons').select(['password_hash']).where('uuid', '=', uuid).executeTakeFirst()
}

export async function insertEperson(db: DbExecutor, row: NewEpersonRow): Promise<void> {
  await db.insertInto('authn_epersons').values(row).execute()
}

export async function updateEperson(
  db: DbExecutor,
  uuid: string,
  changes: Partial<Pick<EpersonRow, 'password_hash' | 'can_log_in' | 'first_name' | 'last_name' | 'last_active'>>,
): Promise<boolean> {
  const result = await db.updateTable('authn_epersons').set(changes).where('uuid', '=', uuid).executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function deleteEperson(db: DbExecutor, uuid: string): Promise<boolean> {
  const result = await db.deleteFrom('authn_epersons').where('uuid', '=', uuid).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** One page of epersons in e-mail order, after `afterEmail` (keyset pagination). */
export function listEpersons(db: DbExecutor, limit: number, afterEmail?: string): Promise<PublicEpersonRow[]> {
  let query = db.selectFrom('authn_epersons').select(PUBLIC_COLUMNS).orderBy('email').limit(limit)
  if (afterEmail !== undefined) query = query.where('email', '>', afterEmail)
  return query.execute()
}

export function findGroupByName(db: DbExecutor, name: string): Promise<GroupRow | undefined> {
  return db.selectFrom('authn_groups').select(['uuid', 'name', 'permanent', 'created_at']).where('name', '=', name).executeTakeFirst()
}

export function findGroupByUuid(db: DbExecutor, uuid: string): Promise<GroupRow | undefined> {
  return db.selectFrom('authn_groups').select(['uuid', 'name', 'permanent', 'created_at']).where('uuid', '=', uuid).executeTakeFirst()
}

export function findGroupsByUuids(db: DbExecutor, uuids: readonly string[]): Promise<GroupRow[]> {
  if (uuids.length === 0) return Promise.resolve([])
  return db.selectFrom('authn_groups').select(['uuid', 'name', 'permanent', 'created_at']).where('uuid', 'in', uuids).orderBy('name').execute()
}

export async function insertGroup(db: DbExecutor, row: GroupRow): Promise<void> {
  await db.insertInto('authn_groups').values(row).execute()
}

/** Adds a membership; returns false when it already existed. */
export async function addMember(db: DbExecutor, groupUuid: string, epersonUuid: string): Promise<boolean> {
  const existing = await db
    .selectFrom('authn_group_members')
    .select('group_uuid')
    .where('group_uuid', '=', groupUuid)
    .where('eperson_uuid', '=', epersonUuid)
    .executeTakeFirst()
  if (existing) return false
  await db.insertInto('authn_group_members').values({ group_uuid: groupUuid, eperson_uuid: epersonUuid }).execute()
  return true
}

export async function isMemberOfGroupNamed(db: DbExecutor, epersonUuid: string, groupName: string): Promise<boolean> {
  const row = await db
    .selectFrom('authn_group_members')
    .innerJoin('authn_groups', 'authn_groups.uuid', 'authn_group_members.group_uuid')
    .select('authn_group_members.group_uuid')
    .where('authn_group_members.eperson_uuid', '=', epersonUuid)
    .where('authn_groups.name', '=', groupName)
    .executeTakeFirst()
  return row !== undefined
}

export async function isMemberOfGroup(db: DbExecutor, epersonUuid: string, groupUuid: string): Promise<boolean> {
  const row = await db
    .selectFrom('authn_group_members')
    .select('group_uuid')
    .where('eperson_uuid', '=', epersonUuid)
    .where('group_uuid', '=', groupUuid)
    .executeTakeFirst()
  return row !== undefined
}
