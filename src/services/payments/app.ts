import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { installErrorHandling } from '../../core/errors/error-handler.ts'
import { createRateLimiter, rateLimitHook } from '../../core/http/rate-limit.ts'
import { coreError } from '../../core/errors/codes.ts'
import type { ServiceBase, ServiceDefinition } from '../../core/service.ts'
import { paymentsCommands } from './cli.ts'
import type { PaymentsConfig } from './config.ts'
import type { PaymentsContext } from './context.ts'
import { authHook, keyFromAuthorization } from './http/auth.ts'
import { formatPaymentsError } from './http/errors.ts'
import { installIdempotency } from './http/idempotency.ts'
import { installWireFormat } from './http/wire.ts'
import type { Mailer } from './mail/mailer.port.ts'
import { createOutboxMailer } from './mail/outbox.mailer.ts'
import { createSmtpMailer } from './mail/smtp.mailer.ts'
import { appsRoutes } from './modules/apps/apps.routes.ts'
import { createAppsService, hashKey } from './modules/apps/apps.service.ts'
import { clientApiPlugin } from './modules/client-payments/client-api.plugin.ts'
import { hostedPageRoutes } from './modules/hosted-page/hosted-page.routes.ts'
import { vaultKeyring } from './modules/vault/vault.keys.ts'
import { createVaultService, type VaultService } from './modules/vault/vault.service.ts'
import type { VaultDb } from './modules/vault/vault.table.ts'
import { disputesRoutes } from './modules/disputes/disputes.routes.ts'
import { createDisputesService } from './modules/disputes/disputes.service.ts'
import { loadFxTable } from './modules/ledger/fx.ts'
import { linesRoutes } from './modules/ledger/lines.routes.ts'
import { createLinesService } from './modules/ledger/lines.service.ts'
import { FUNDING_CURRENCIES, PAYMENTS_FORMATS } from './modules/merchants/merchants.schemas.ts'
import { merchantsRoutes } from './modules/merchants/merchants.routes.ts'
import { createMerchantsService } from './modules/merchants/merchants.service.ts'
import { transactionsRoutes } from './modules/transactions/transactions.routes.ts'
import { createTransactionsService } from './modules/transactions/transactions.service.ts'
import { migrations } from './migrations/index.ts'
import type { CardProcessor } from './processors/card-processor.port.ts'
import { createSandboxProcessor } from './processors/sandbox.processor.ts'
import type { PaymentsTables } from './tables.ts'

/** The replaceable providers of the payments service (tests set fakes). */
export interface PaymentsExtra {
  mailer: Mailer
  processor: CardProcessor
}

type PaymentsDeps = ServiceBase & { config: PaymentsConfig } & Partial<PaymentsExtra>

/** Builds the shared context: rate table, mailer and acquirer, on the service's database. */
export function createPaymentsContext(deps: PaymentsDeps, log: FastifyBaseLogger): PaymentsContext & { close(): void } {
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
  return {
    database: { db, dialect: deps.database.dialect },
    db,
    clock: deps.clock,
    ids: deps.ids,
    config: deps.config,
    fx,
    mailer,
    processor,
    log,
    close,
  }
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

export const paymentsService: ServiceDefinition<PaymentsConfig, PaymentsExtra> = {
  name: 'payments',
  migrations,
  formats: PAYMENTS_FORMATS,
  commands: paymentsCommands,
  plugin: (deps) => async (app) => {
    // Payments routes live at the root (/apps, /merchants, …), so unknown paths are answered by
    // the root's not-found handler; errors inside use Paylike's shapes (http/errors.ts).
    installErrorHandling(app, formatPaymentsError, { notFound: false })
    installWireFormat(app)

    const ctx = createPaymentsContext(deps, app.log)
    app.addHook('onClose', async () => ctx.close())
    // The vault keys are read (or moved out of an old database, or generated) before any request.
    const vault = createVault(ctx, deps)
    await vault.init(app.log)
    const apps = createAppsService({ db: ctx.db, clock: ctx.clock, ids: ctx.ids })
    const merchants = createMerchantsService(ctx)
    const transactions = createTransactionsService(ctx, merchants, vault)
    const lines = createLinesService(ctx, merchants)
    const disputes = createDisputesService(ctx, merchants)

    const rule = deps.config.rateLimit
    if (rule) {
      const limiter = createRateLimiter({
        ...rule,
        clock: deps.clock,
        redis: deps.redis,
        prefix: 'triad:payments:rl',
        onStoreError: (error) => app.log.warn({ err: error }, 'rate-limit store unavailable; counting in memory'),
      })
      app.addHook(
        'onRequest',
        rateLimitHook({
          limiter,
          // Per API key when one is sent (hashed, never kept in clear), else per client address.
          keyOf: (request) => {
            const key = keyFromAuthorization(request.headers.authorization)
            return key === undefined ? `ip:${request.ip}` : `key:${hashKey(key)}`
          },
          onExceeded: (result) => coreError('rate_limited', `Too many requests; retry in ${result.resetSeconds} s`),
        }),
      )
    }
    app.addHook('onRequest', authHook(apps))
    installIdempotency(app, { db: ctx.db, clock: ctx.clock, ttlMs: deps.config.idempotencyTtlMs })

    await app.register(appsRoutes(apps))
    await app.register(merchantsRoutes(merchants))
    await app.register(transactionsRoutes(transactions))
    await app.register(linesRoutes(lines))
    await app.register(disputesRoutes(disputes))

    // The customer side (issue 7): the client API (vault, /payments, 3-D Secure frames) in its
    // own scope with Paylike's client wire rules, and the hosted payment page.
    await app.register(clientApiPlugin(ctx, vault))
    await app.register(hostedPageRoutes(ctx))
  },
}
