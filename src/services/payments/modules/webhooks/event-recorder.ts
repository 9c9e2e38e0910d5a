import type { Clock } from '../../../../core/clock.ts'
import type { DialectName } from '../../../../core/db/create-db.ts'
import { WriteBatch } from '../../../../core/db/write-batch.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { actorColumns } from '../../actor.ts'
import type { EventSink, EventType } from '../../events/event-sink.port.ts'
import * as repo from './webhooks.repository.ts'

/** Whether an endpoint's event list (JSON text) takes this type; `*` takes every type. */
export function subscribes(events: readonly string[], type: EventType | string): boolean {
  return events.includes('*') || events.includes(type)
}

/**
 * The outbox (the `EventSink` the transactions and disputes modules call inside their database
 * transactions): the event row, and one pending delivery for each enabled endpoint of the
 * merchant that subscribes to its type, all in the caller's transaction (or its write batch,
 * sent with the change's own writes). One read first: the event's place in its subject's
 * sequence and the merchant's endpoints. `recorded` is told afterwards, so the local worker can
 * look soon (it finds the rows once the caller commits).
 */
export function createEventRecorder(deps: { ids: IdGenerator; clock: Clock; dialect: DialectName; recorded?: () => void }): EventSink {
  return {
    async record(writes, event) {
      const now = deps.clock.now().toISOString()
      const trx = writes instanceof WriteBatch ? writes.trx : writes
      const place = await repo.outboxPlaceOf(trx, deps.dialect, event.subjectId, event.merchantId)
      const id = deps.ids.timeOrdered()
      await repo.insertEvent(writes, deps.dialect, {
        id,
        merchant_id: event.merchantId,
        type: event.type,
        subject_id: event.subjectId,
        subject_seq: place.seq,
        created: now,
        data: JSON.stringify(event.data),
        ...actorColumns(event.actor),
      })
      const endpoints = place.endpoints.filter((endpoint) => subscribes(JSON.parse(endpoint.events) as string[], event.type))
      await repo.insertDeliveries(
        writes,
        deps.dialect,
        endpoints.map((endpoint) => ({
          id: deps.ids.timeOrdered(),
          event_id: id,
          endpoint_id: endpoint.id,
          subject_id: event.subjectId,
          subject_seq: place.seq,
          status: 'pending' as const,
          attempts: 0,
          next_attempt: now,
          lease_until: null,
          lease_token: null,
          created: now,
          completed: null,
          last_error: null,
        })),
      )
      if (endpoints.length > 0) deps.recorded?.()
    },
  }
}
