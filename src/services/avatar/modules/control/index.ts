import type { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { SessionsService } from '../sessions/index.ts'
import { type ControlBus, createLocalBus, createRedisBus } from './control.bus.ts'
import { createControlService } from './control.service.ts'

export { controlRoutes } from './control.routes.ts'
export type { ControlService } from './control.service.ts'

/** The operator channel over Redis pub/sub when Redis is configured, else within this process. */
export function createControl(deps: { redis?: Redis; sessions: SessionsService; clock: Clock; ids: IdGenerator; log: FastifyBaseLogger }) {
  // The listening connection reports every failed reconnection (two a second through an
  // outage), as the shared connection does, whose log says once a minute that Redis is gone.
  let loggedAt = Number.NEGATIVE_INFINITY
  const onError = (error: unknown) => {
    if (performance.now() - loggedAt < 60_000) return
    loggedAt = performance.now()
    deps.log.warn({ err: error }, 'operator channel: redis subscriber error (logged once a minute at most)')
  }
  const bus: ControlBus = deps.redis ? createRedisBus(deps.redis, { onError }) : createLocalBus()
  return { service: createControlService({ bus, sessions: deps.sessions, clock: deps.clock, ids: deps.ids }), close: () => bus.close() }
}
