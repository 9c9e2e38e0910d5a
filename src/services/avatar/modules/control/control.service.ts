import type { Clock } from '../../../../core/clock.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { SessionsService } from '../sessions/index.ts'
import type { ControlBus } from './control.bus.ts'
import type { ActBody, ControlEvent, SayBody } from './control.schemas.ts'

/**
 * Redis (the fan-out across instances) failed: a 503 that says so, not an anonymous 500. The
 * channel fails closed: delivering on this instance alone would answer "delivered" to an
 * operator whose page may be listening on another.
 */
function unreachable(cause: unknown) {
  return coreError('service_unavailable', 'The operator channel cannot reach Redis right now; try again', { cause, headers: { 'retry-after': '2' } })
}

export interface ControlServiceDeps {
  bus: ControlBus
  sessions: SessionsService
  clock: Clock
  ids: IdGenerator
}

/**
 * The operator's control channel: what an operator sends reaches every page showing the
 * session, and what the avatar is made to say is kept in the session's history as the
 * operator's, so the model sees it as the avatar's own line afterwards.
 */
export function createControlService(deps: ControlServiceDeps) {
  const publish = async (sessionId: string, event: ControlEvent) => {
    try {
      await deps.bus.publish(sessionId, JSON.stringify(event))
    } catch (error) {
      throw unreachable(error)
    }
    return { delivered: true as const, event }
  }
  return {
    async say(sessionId: string, body: SayBody) {
      const at = deps.clock.now().toISOString()
      const event: ControlEvent = {
        type: 'say',
        id: deps.ids.prefixed('opm'),
        text: body.text,
        emotion: body.emotion ?? 'neutral',
        action: body.action ?? 'speak',
        ...(body.voice === undefined ? {} : { voice: body.voice }),
        at,
      }
      if (!deps.bus.available()) throw unreachable(undefined)
      // Published first, stored once published: a say answered 503 is never in the history (the
      // operator's retry would make it a duplicate) and one answered 200 always is. Stored
      // first, a failed publish would need a delete that can fail too. What is left
      // (docs/decisions.md): a publish whose answer is lost, or a store that fails after it,
      // may have been heard although the say is refused and not stored.
      const sent = await publish(sessionId, event)
      await deps.sessions.recordOperator(sessionId, { content: body.text, emotion: event.emotion, action: event.action, at })
      return sent
    },

    async act(sessionId: string, body: ActBody) {
      return publish(sessionId, { type: 'act', id: deps.ids.prefixed('opm'), ...body, at: deps.clock.now().toISOString() })
    },

    /** Calls `listener` with each event (as JSON) sent to the session from now on; 503 when that cannot be promised. */
    async subscribe(sessionId: string, listener: (message: string) => void) {
      try {
        return await deps.bus.subscribe(sessionId, listener)
      } catch (error) {
        throw unreachable(error)
      }
    },

    /** Like `subscribe`, for a page that works without the channel: listens as soon as, and whenever, it can. */
    follow(sessionId: string, listener: (message: string) => void): () => void {
      return deps.bus.follow(sessionId, listener)
    },
  }
}

export type ControlService = ReturnType<typeof createControlService>
