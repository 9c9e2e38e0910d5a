import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../../core/clock.ts'
import type { IdGenerator } from '../../../core/ids.ts'
import { insertOutboxMail } from './outbox.repository.ts'
import type { PaymentsDb } from '../tables.ts'
import type { Mailer } from './mailer.port.ts'

/**
 * Without SMTP, e-mails are kept in the `payments_outbox` table and written to the log, so an
 * operator (or a test) can still read the invitation link.
 */
export function createOutboxMailer(deps: { db: PaymentsDb; ids: IdGenerator; clock: Clock; log: FastifyBaseLogger }): Mailer {
  return {
    async send(message) {
      await insertOutboxMail(deps.db, {
        id: deps.ids.timeOrdered(),
        recipient: message.to,
        subject: message.subject,
        body: message.text,
        created: deps.clock.now().toISOString(),
      })
      deps.log.info({ to: message.to, subject: message.subject }, 'e-mail kept in the outbox (PAYMENTS_SMTP_URL is not set)')
    },
  }
}
