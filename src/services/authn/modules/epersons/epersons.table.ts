import type { Insertable, Selectable } from 'kysely'

interface EpersonsTable {
  uuid: string
  /** Stored lower-case, so the unique index makes e-mails unique case-insensitively. */
  email: string
  password_hash: string | null
  can_log_in: number
  first_name: string | null
  last_name: string | null
  created_at: string
  last_active: string | null
}

interface GroupsTable {
  uuid: string
  name: string
  permanent: number
  created_at: string
}

interface GroupMembersTable {
  group_uuid: string
  eperson_uuid: string
}

export type EpersonRow = Selectable<EpersonsTable>
export type NewEpersonRow = Insertable<EpersonsTable>
export type GroupRow = Selectable<GroupsTable>

/** The tables this module owns. */
export interface EpersonsTables {
  authn_epersons: EpersonsTable
  authn_groups: GroupsTable
  authn_group_members: GroupMembersTable
}
