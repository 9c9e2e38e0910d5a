import type { Clock } from '../../../../core/clock.ts'
import type { ModuleDatabase } from '../../db.ts'
import { authnErrors } from '../../errors.ts'
import type { Actor } from '../audit/index.ts'
import { countLiveSessionsOf, findSession, listLiveSessionsOf } from './sessions.repository.ts'
import type { SessionRow, SessionsTables } from './sessions.table.ts'
import type { TokenService } from './tokens.service.ts'

/**
 * Sessions as their owners (and administrators) see them: one per login, per device. Revoking
 * one ends that device's tokens only; logout (DSpace's meaning) still ends every one.
 */
export function createSessionsService(deps: { database: ModuleDatabase<SessionsTables>; clock: Clock; tokens: TokenService }) {
  const { database, clock, tokens } = deps

  return {
    async list(epersonUuid: string, page: number, size: number): Promise<{ rows: SessionRow[]; total: number }> {
      const now = clock.now().toISOString()
      const [rows, total] = await Promise.all([
        listLiveSessionsOf(database.db, epersonUuid, now, size, page * size),
        countLiveSessionsOf(database.db, epersonUuid, now),
      ])
      return { rows, total }
    },

    /** A live session its owner or an administrator may see; anyone else gets the same 404 as for a missing one. */
    async find(id: string, by: Pick<Actor, 'uuid' | 'admin'>): Promise<SessionRow> {
      const row = await findSession(database.db, id)
      if (!row || row.expires_at <= clock.now().toISOString() || (row.eperson_uuid !== by.uuid && !by.admin)) throw authnErrors.notFound(`No session ${id}`)
      return row
    },

    /** Ends one session: its tokens stop on every instance (see TokenService.revokeSession). */
    async revoke(id: string, by: Actor): Promise<SessionRow> {
      const row = await this.find(id, by)
      if (!(await tokens.revokeSession(row.eperson_uuid, id))) throw authnErrors.notFound(`No session ${id}`)
      by.record({ action: 'session.revoke', eperson: row.eperson_uuid, target: id })
      return row
    },
  }
}

export type SessionsService = ReturnType<typeof createSessionsService>
