import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import { createSessionsRepository } from './sessions.repository.ts'
import { createSessionsService, type SessionsService } from './sessions.service.ts'

export { SessionIdSchema, SessionParamsSchema } from './sessions.schemas.ts'
export { sessionsRoutes } from './sessions.routes.ts'
export type { SessionsService } from './sessions.service.ts'

/** The sessions service over its own repository. */
export function createSessions(deps: { database: Database; clock: Clock; sessionTtlMs: number; historyLimit: number }): SessionsService {
  return createSessionsService({ repository: createSessionsRepository(deps.database), clock: deps.clock, sessionTtlMs: deps.sessionTtlMs, historyLimit: deps.historyLimit })
}
