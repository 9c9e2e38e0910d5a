import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../core/clock.ts'
import type { Database, DialectName } from '../../core/db/create-db.ts'
import type { IdGenerator } from '../../core/ids.ts'
import type { PaymentsConfig } from './config.ts'
import type { EventSink } from './events/event-sink.port.ts'
import type { Mailer } from './mail/mailer.port.ts'
import type { PaymentsMetrics } from './metrics.ts'
import type { FxTable } from './money/fx.ts'
import type { CardProcessor } from './processors/card-processor.port.ts'
import type { PaymentsTables } from './tables.ts'

/** What the payments services share: built once per mounted app (or CLI run). */
export interface PaymentsContext {
  database: { db: Kysely<PaymentsTables>; dialect: DialectName; routedRead: Database['routedRead'] }
  db: Kysely<PaymentsTables>
  clock: Clock
  ids: IdGenerator
  config: PaymentsConfig
  fx: FxTable
  mailer: Mailer
  processor: CardProcessor
  log: FastifyBaseLogger
  /** The outbox: changes record their webhook events here, in their own database transaction. */
  events: EventSink
  metrics: PaymentsMetrics
}
