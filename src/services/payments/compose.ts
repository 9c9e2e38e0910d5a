import type { FastifyBaseLogger } from 'fastify'
import { createPaymentsMetrics } from './metrics.ts'
import type { Kysely } from 'kysely'
import pino from 'pino'
import type { ServiceBase, ServiceCliEnvironment } from '../../core/service.ts'
import type { PaymentsConfig } from './config.ts'
import type { PaymentsContext } from './context.ts'
import type { Mailer } from './mail/mailer.port.ts'
import { createOutboxMailer } from './mail/outbox.mailer.ts'
import { createSmtpMailer } from './mail/smtp.mailer.ts'
import type { Scheduler } from '../../core/scheduler.ts'
import { createDisputesService, type DisputesService } from './modules/disputes/index.ts'
import { createEventRecorder, createSecretBox, type SecretBox } from './modules/webhooks/index.ts'
import { FUNDING_CURRENCIES, type MerchantsService } from './modules/merchants/index.ts'
import { createDisputeMovements } from './modules/transactions/index.ts'
import { createVaultService, type VaultDb, vaultKeyring, type VaultService } from './modules/vault/index.ts'
import { loadFxTable } from './money/fx.ts'
import type { CardProcessor } from './processors/card-processor.port.ts'
import { createSandboxProcessor } from './processors/sandbox.processor.ts'
import type { PaymentsTables } from './tables.ts'

// The payments composition: what app.ts (the HTTP service) and the CLIs (cli.ts, vault.cli.ts)
// both build, here so that neither entry point imports the other.

/** The replaceable providers of the payments service (tests set fakes). */
export interface PaymentsExtra {
  mailer: Mailer
  processor: CardProcessor
  /** Where the webhook worker schedules its rounds (tests use a manual one and run what is due). */
  scheduler: Scheduler
}

export type PaymentsDeps = ServiceBase & { config: PaymentsConfig } & Partial<PaymentsExtra>

/** Runs a command's `work` on a context of its own (silent log), closed afterwards. */
export function withPaymentsContext<T>(
  env: ServiceCliEnvironment<PaymentsConfig>,
  work: (ctx: PaymentsContext, deps: PaymentsDeps) => Promise<T>,
): Promise<T> {
  return env.withService(async (deps) => {
    const ctx = createPaymentsContext(deps, pino({ level: 'silent' }))
    try {
      return await work(ctx, deps)
    } finally {
      ctx.close()
    }
  })
}

/** What the context adds for its builder: closing it, and hearing of events recorded (to wake the webhook worker). */
interface OwnedPaymentsContext extends PaymentsContext {
  close(): void
  onEventRecorded(listener: () => void): void
}

/** Builds the shared context: rate table, mailer, acquirer and event outbox, on the service's database. */
export function createPaymentsContext(deps: PaymentsDeps, log: FastifyBaseLogger): OwnedPaymentsContext {
  const db = deps.database.db as Kysely<PaymentsTables>
  const fx = loadFxTable(deps.config.fxRatesPath)
  const missing = FUNDING_CURRENCIES.filter((code) => !fx.rates.has(code))
  if (missing.length > 0) throw new Error(`PAYMENTS_FX_RATES: the rate table lacks funding currencies ${missing.join(', ')}`)
  let close = () => {}
  const outbox = createOutboxMailer({ db, ids: deps.ids, clock: deps.clock, log })
  let mailer = deps.mailer
  if (!mailer && deps.config.smtpUrl) {
    const smtp = createSmtpMailer(deps.config.smtpUrl, deps.config.smtpFrom)
    close = smtp.close
    // An e-mail SMTP refused is kept in the outbox, so an operator can still send it.
    mailer = {
      async send(message) {
        try {
          await smtp.send(message)
        } catch (error) {
          log.error({ err: error, to: message.to }, 'SMTP delivery failed; e-mail kept in the outbox')
          await outbox.send(message)
        }
      },
    }
  }
  mailer ??= outbox
  const processor = deps.processor ?? createSandboxProcessor({ db, dialect: deps.database.dialect, clock: deps.clock, fx })
  let eventRecorded = () => {}
  return {
    database: { db, dialect: deps.database.dialect, routedRead: deps.database.routedRead },
    db,
    clock: deps.clock,
    ids: deps.ids,
    config: deps.config,
    fx,
    mailer,
    processor,
    log,
    events: createEventRecorder({ ids: deps.ids, clock: deps.clock, dialect: deps.database.dialect, recorded: () => eventRecorded() }),
    metrics: createPaymentsMetrics(deps.metrics),
    close,
    onEventRecorded(listener) {
      eventRecorded = listener
    },
  }
}

/** The sealer of webhook signing secrets (PAYMENTS_WEBHOOK_KEY first, then the secrets file), keys read. */
export async function createWebhookSecrets(deps: Pick<PaymentsDeps, 'secrets' | 'config'>): Promise<SecretBox> {
  const box = createSecretBox(deps.secrets, deps.config.webhooks.key)
  await box.init()
  return box
}

/** The card vault over the context's database, with the vault keys of `deps.secrets`. */
export function createVault(ctx: PaymentsContext, deps: Pick<PaymentsDeps, 'secrets' | 'config'>): VaultService {
  return createVaultService({
    database: { db: ctx.db as unknown as VaultDb, dialect: ctx.database.dialect },
    clock: ctx.clock,
    ids: ctx.ids,
    keyring: vaultKeyring(deps.secrets, deps.config.vaultKey),
    tokenTtlMs: deps.config.vaultTokenTtlMs,
  })
}

/** The disputes service, with the transactions module's port for the money its disputes move. */
export function createDisputes(ctx: PaymentsContext, merchants: MerchantsService): DisputesService {
  return createDisputesService({ db: ctx.db, clock: ctx.clock, ids: ctx.ids, merchants, movements: createDisputeMovements(ctx), events: ctx.events })
}
