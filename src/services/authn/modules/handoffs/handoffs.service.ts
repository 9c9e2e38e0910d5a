import type { Clock } from '../../../../core/clock.ts'
import { generateSecretToken, hashSecretToken } from '../../../../core/security/secret-token.ts'
import type { ModuleDatabase } from '../../db.ts'
import { deleteExpiredHandoffs, insertHandoff, takeHandoff } from './handoffs.repository.ts'
import type { HandoffsTables } from './handoffs.table.ts'

const HANDOFF_LIFETIME_MS = 60_000

export interface Handoff {
  epersonUuid: string
  method: string
  /** Group uuids this login grants beyond its method's. */
  specialGroups: string[]
}

/**
 * The end of every federated login (OIDC, SAML): a one-time code, kept in the database under
 * its hash for a minute, that the browser carries in an HttpOnly cookie to POST /authn/login
 * (DSpace's `Authorization-cookie` step), on whichever instance it reaches.
 */
export function createHandoffService(deps: { database: ModuleDatabase<HandoffsTables>; clock: Clock }) {
  const { database, clock } = deps
  return {
    async issue(handoff: Handoff): Promise<string> {
      const now = clock.now()
      await deleteExpiredHandoffs(database.db, now.toISOString())
      const code = generateSecretToken(32)
      await insertHandoff(database.db, {
        code_hash: hashSecretToken(code),
        eperson_uuid: handoff.epersonUuid,
        method: handoff.method,
        expires_at: new Date(now.getTime() + HANDOFF_LIFETIME_MS).toISOString(),
        special_groups: handoff.specialGroups.length > 0 ? JSON.stringify(handoff.specialGroups) : null,
      })
      return code
    },

    /** Consumes a code; undefined when unknown, used or expired. */
    async consume(code: string): Promise<Handoff | undefined> {
      const row = await takeHandoff(database.db, hashSecretToken(code))
      if (!row || row.expires_at <= clock.now().toISOString()) return undefined
      const groups: unknown = row.special_groups ? JSON.parse(row.special_groups) : []
      return {
        epersonUuid: row.eperson_uuid,
        method: row.method,
        specialGroups: Array.isArray(groups) ? groups.filter((group): group is string => typeof group === 'string') : [],
      }
    },
  }
}

export type HandoffService = ReturnType<typeof createHandoffService>
