import type { Selectable } from 'kysely'

/**
 * One row per login (per device). The row is the server-side truth of which tokens are alive:
 * a token is valid only while its session exists and its `jti` is the current one (or the
 * previous one, within the refresh grace). Logging out deletes every session of the eperson.
 */
interface SessionsTable {
  id: string
  eperson_uuid: string
  method: string
  /** JSON array of the group uuids the login method granted (the `sg` claim). */
  special_groups: string
  created_at: string
  /** Absolute end of the session: refreshes never reach past it. */
  expires_at: string
  current_jti: string
  current_iat: number
  current_exp: number
  previous_jti: string | null
  previous_valid_until: string | null
  /** A short summary of the login's User-Agent (browser and system), or null when none was sent. */
  device: string | null
  /** The client address of the login. */
  ip: string | null
  /** When a request last used the session; written at most once a minute per session and instance. */
  last_seen_at: string | null
}

export type SessionRow = Selectable<SessionsTable>

/**
 * The columns of `authn_epersons` (owned by the epersons module) that the session lookup joins on
 * the path of every authenticated request: one query instead of two. Read only; never written here.
 */
interface EpersonColumnsReadBySessions {
  uuid: string
  email: string
  can_log_in: number
  first_name: string | null
  last_name: string | null
  created_at: string
  last_active: string | null
}

/** The tables this module owns, and the eperson columns its one join reads. */
export interface SessionsTables {
  authn_sessions: SessionsTable
  authn_epersons: EpersonColumnsReadBySessions
}
