import type { Database } from '../../../../core/db/create-db.ts'
import { createSessionsRepository } from './sessions.repository.ts'
import { createSessionsService, type SessionsService, type SessionsServiceDeps } from './sessions.service.ts'

export { SessionIdSchema, SessionParamsSchema } from './sessions.schemas.ts'
export { sessionsRoutes } from './sessions.routes.ts'
export type { SessionsService } from './sessions.service.ts'

/** The sessions service over its own repository. */
export function createSessions(deps: Omit<SessionsServiceDeps, 'repository'> & { database: Database }): SessionsService {
  const { database, ...rest } = deps
  return createSessionsService({ ...rest, repository: createSessionsRepository(database) })
}
