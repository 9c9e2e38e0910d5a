import { installErrorHandling } from '../../core/errors/error-handler.ts'
import { createRateLimiter, type RateLimitRule, rateLimitHook } from '../../core/http/rate-limit.ts'
import { coreError } from '../../core/errors/codes.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import { paymentsCommands } from './cli.ts'
import { createDisputes, createPaymentsContext, createVault, createWebhookSecrets, type PaymentsExtra } from './compose.ts'
import { systemScheduler } from '../../core/scheduler.ts'
import type { PaymentsConfig } from './config.ts'
import { authHook, keyFromAuthorization } from './http/auth.ts'
import { formatPaymentsError } from './http/errors.ts'
import { installIdempotency } from './http/idempotency.ts'
import { installWireFormat } from './http/wire.ts'
import { appsRoutes, createAppsService, hashKey } from './modules/apps/index.ts'
import { clientApiPlugin } from './modules/client-payments/index.ts'
import { createDashboardPasskeys, createDashboardService, createSignInLinks, dashboardRoutes } from './modules/dashboard/index.ts'
import { disputesRoutes } from './modules/disputes/index.ts'
import { hostedPageRoutes } from './modules/hosted-page/index.ts'
import { createLinesService, linesRoutes } from './modules/ledger/index.ts'
import { createMerchantsService, merchantsRoutes, PAYMENTS_FORMATS } from './modules/merchants/index.ts'
import { createTransactionsService, transactionsRoutes } from './modules/transactions/index.ts'
import { createDeliveryWorker, createWebhooksService, webhooksRoutes } from './modules/webhooks/index.ts'
import { migrations } from './migrations/index.ts'

/** Re-exported: the tests name the payments extras by this module. */
export type { PaymentsExtra }

export const paymentsService: ServiceDefinition<PaymentsConfig, PaymentsExtra> = {
  name: 'payments',
  migrations,
  paths: ['/apps', '/me', '/merchants', '/identities', '/transactions', '/cards', '/lines', '/disputes', '/frauds', '/vault', '/payments', '/pos', '/dashboard'],
  errorBody: formatPaymentsError,
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
    const disputes = createDisputes(ctx, merchants)

    // Webhooks (issue 18): the worker sends the outbox; every instance runs one unless
    // PAYMENTS_WEBHOOK_DELIVERY=false, and leases keep them from sending the same delivery.
    const webhookSecrets = await createWebhookSecrets(deps)
    const worker = createDeliveryWorker({
      database: ctx.database,
      clock: ctx.clock,
      ids: ctx.ids,
      scheduler: deps.scheduler ?? systemScheduler,
      secrets: webhookSecrets,
      config: deps.config.webhooks,
      log: app.log,
    })
    ctx.onEventRecorded(() => worker.nudge())
    const webhooks = createWebhooksService({ ctx, merchants, secrets: webhookSecrets, scheduled: () => worker.nudge() })
    if (deps.config.webhooks.delivery) {
      app.addHook('onReady', async () => worker.start())
      app.addHook('onClose', async () => worker.stop())
    }

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
    // The dashboard (issue 18) signs a browser in with an app key once, then authenticates it by
    // an HttpOnly cookie (with a CSRF token for changes); the hook reads that cookie only from a
    // request without an Authorization header, and only the dashboard's routes set cookies.
    const dashboard = createDashboardService({ db: ctx.db, clock: ctx.clock, apps, ttlMs: deps.config.dashboardSessionTtlMs })
    // Merchant users sign in with an e-mailed one-time link (issue 30), limited per e-mail and
    // per address with the service's limiter (shared through Redis when REDIS_URL is set).
    const linkLimiter = (name: string, rule: RateLimitRule | undefined) =>
      rule &&
      createRateLimiter({
        ...rule,
        clock: deps.clock,
        redis: deps.redis,
        prefix: `triad:payments:dashboard-link:${name}`,
        onStoreError: (error) => app.log.warn({ err: error }, 'rate-limit store unavailable; counting in memory'),
      })
    const links = createSignInLinks({
      db: ctx.db,
      clock: ctx.clock,
      mailer: ctx.mailer,
      log: app.log,
      sessions: dashboard,
      ttlMs: deps.config.dashboardLinks.ttlMs,
      limits: { perEmail: linkLimiter('email', deps.config.dashboardLinks.perEmail), perIp: linkLimiter('ip', deps.config.dashboardLinks.perIp) },
    })
    app.addHook('onClose', async function settleSignInLinks() {
      await links.settled()
    })
    app.addHook('onRequest', authHook(apps, dashboard))
    installIdempotency(app, { database: ctx.database, clock: ctx.clock, ttlMs: deps.config.idempotencyTtlMs, metrics: ctx.metrics })

    await app.register(appsRoutes(apps))
    await app.register(merchantsRoutes(merchants))
    await app.register(transactionsRoutes(transactions, ctx.clock))
    await app.register(linesRoutes(lines))
    await app.register(disputesRoutes(disputes))
    await app.register(webhooksRoutes(webhooks))

    // The customer side (issue 7): the client API (vault, /payments, 3-D Secure frames) in its
    // own scope with Paylike's client wire rules, and the hosted payment page.
    await app.register(clientApiPlugin(ctx, vault))
    await app.register(hostedPageRoutes(ctx))
    const passkeys = createDashboardPasskeys({ db: ctx.db, clock: ctx.clock, sessions: dashboard })
    await app.register(dashboardRoutes(dashboard, { config: deps.config, clock: ctx.clock, links, passkeys }))
  },
}
