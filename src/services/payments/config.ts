import { Type } from '@sinclair/typebox'
import { DURATION_PATTERN, parseDuration } from '../../core/config/duration.ts'
import { defineSection, Env } from '../../core/config/load-config.ts'
import { parseRateLimit, RATE_LIMIT_PATTERN } from '../../core/http/rate-limit.ts'

export const paymentsSection = defineSection(
  Type.Object({
    PAYMENTS_VAULT_KEY: Env.optionalString('32 bytes as 64 hexadecimal digits; during a rotation the new key, a comma, then the old one(s)', {
      pattern: '^[0-9a-fA-F]{64}(,[0-9a-fA-F]{64})*$',
    }),
    PAYMENTS_SMTP_URL: Env.optionalString('an SMTP URL such as smtp://user:pass@mail.example.com:587 (unset: e-mails go to the outbox table and the log)', {
      pattern: '^smtps?://',
    }),
    PAYMENTS_SMTP_FROM: Env.string('the From address of merchant invitations and dashboard sign-in links', { default: 'Triad Payments <no-reply@triad.invalid>' }),
    PAYMENTS_FX_RATES: Env.optionalString('the path of a JSON rate table {base, date, rates:{CODE:"decimal"}} (unset: the shipped table)'),
    PAYMENTS_FX_MARKUP: Env.string('the currency-conversion markup in percent, e.g. 2 or 1.5', { default: '2', pattern: '^\\d{1,2}(\\.\\d{1,4})?$' }),
    PAYMENTS_RATE_LIMIT: Env.string('requests per API key (or per address without one), e.g. 1200/min, 20/s, 10000/h, or 0 for none', {
      default: '1200/min',
      pattern: RATE_LIMIT_PATTERN,
    }),
    PAYMENTS_IDEMPOTENCY_TTL: Type.String({
      pattern: DURATION_PATTERN,
      default: '24h',
      description: 'how long an Idempotency-Key replays its first response, e.g. 24h',
    }),
    PAYMENTS_VAULT_TOKEN_TTL: Type.String({
      pattern: DURATION_PATTERN,
      default: '30m',
      description: 'how long a vault token (POST /vault) can be used, e.g. 30m',
    }),
    PAYMENTS_READ_CACHE_LAG: Type.String({
      pattern: DURATION_PATTERN,
      default: '100ms',
      description:
        'on SQLite, how long GET /transactions/{id} may answer from memory before noticing a write by another process on the same file, e.g. 100ms (0s: it checks on every read; this instance\'s own writes are seen at once)',
    }),
    PAYMENTS_WEBHOOK_KEY: Env.optionalString(
      'seals webhook signing secrets: 32 bytes as 64 hexadecimal digits; during a rotation the new key, a comma, then the old one(s) (unset: generated into the secrets file)',
      { pattern: '^[0-9a-fA-F]{64}(,[0-9a-fA-F]{64})*$' },
    ),
    PAYMENTS_WEBHOOK_ALLOW_HTTP: Type.Boolean({
      default: false,
      description: '"true" accepts http:// webhook URLs for any host and merchant, and private addresses (development); otherwise https is required, except http to a loopback host for test merchants',
    }),
    PAYMENTS_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({
      default: false,
      description: '"true" lets webhooks go to private, loopback and link-local addresses (receivers inside the operator\'s network); otherwise only public addresses, checked at every connection',
    }),
    PAYMENTS_WEBHOOK_DELIVERY: Type.Boolean({ default: true, description: '"false" stops this instance from sending webhooks (another instance sends them)' }),
    PAYMENTS_WEBHOOK_TIMEOUT: Type.String({ pattern: DURATION_PATTERN, default: '10s', description: 'how long a webhook delivery waits for the endpoint to answer, e.g. 10s' }),
    PAYMENTS_WEBHOOK_RETRY_WINDOW: Type.String({
      pattern: DURATION_PATTERN,
      default: '3d',
      description: 'how long a failing webhook delivery is retried (exponential back-off with jitter), and how long an endpoint may fail without a success before it is disabled, e.g. 3d',
    }),
    PAYMENTS_WEBHOOK_POLL: Type.String({
      pattern: DURATION_PATTERN,
      default: '1s',
      description: 'how often the webhook worker looks for due deliveries (events recorded by this instance are sent at once), e.g. 1s',
    }),
    PAYMENTS_DASHBOARD_SESSION_TTL: Type.String({
      pattern: DURATION_PATTERN,
      default: '8h',
      description: 'how long a sign-in to the merchant dashboard (/dashboard) lasts, e.g. 8h',
    }),
    PAYMENTS_DASHBOARD_LINK_TTL: Type.String({
      pattern: DURATION_PATTERN,
      default: '15m',
      description: "how long a dashboard sign-in link e-mailed to a merchant user works (once), e.g. 15m",
    }),
    PAYMENTS_DASHBOARD_LINK_LIMIT: Env.string('dashboard sign-in links asked for per e-mail address, e.g. 5/h, or 0 for no limit', {
      default: '5/h',
      pattern: RATE_LIMIT_PATTERN,
    }),
    PAYMENTS_DASHBOARD_LINK_IP_LIMIT: Env.string('dashboard sign-in links asked for per client address, e.g. 30/h, or 0 for no limit', {
      default: '30/h',
      pattern: RATE_LIMIT_PATTERN,
    }),
    PAYMENTS_PUBLIC_URL: Env.optionalString('the public base URL of the payments service, e.g. https://pay.example.com (unset: taken from each request; dashboard sign-in links then go only to a loopback host)', {
      pattern: '^https?://',
    }),
  }),
  (env) => ({
    vaultKey: env.PAYMENTS_VAULT_KEY,
    smtpUrl: env.PAYMENTS_SMTP_URL,
    smtpFrom: env.PAYMENTS_SMTP_FROM,
    fxRatesPath: env.PAYMENTS_FX_RATES,
    /** Parts per million: 2 % is 20 000. */
    fxMarkupPpm: Math.round(Number(env.PAYMENTS_FX_MARKUP) * 10_000),
    rateLimit: parseRateLimit(env.PAYMENTS_RATE_LIMIT),
    idempotencyTtlMs: parseDuration(env.PAYMENTS_IDEMPOTENCY_TTL),
    vaultTokenTtlMs: parseDuration(env.PAYMENTS_VAULT_TOKEN_TTL),
    readCacheMaxLagMs: parseDuration(env.PAYMENTS_READ_CACHE_LAG),
    webhooks: {
      key: env.PAYMENTS_WEBHOOK_KEY,
      allowHttp: env.PAYMENTS_WEBHOOK_ALLOW_HTTP,
      /** Development (ALLOW_HTTP) sends to private receivers as well. */
      allowPrivate: env.PAYMENTS_WEBHOOK_ALLOW_PRIVATE || env.PAYMENTS_WEBHOOK_ALLOW_HTTP,
      delivery: env.PAYMENTS_WEBHOOK_DELIVERY,
      timeoutMs: parseDuration(env.PAYMENTS_WEBHOOK_TIMEOUT),
      retryWindowMs: parseDuration(env.PAYMENTS_WEBHOOK_RETRY_WINDOW),
      pollMs: Math.max(1, parseDuration(env.PAYMENTS_WEBHOOK_POLL)),
    },
    dashboardSessionTtlMs: parseDuration(env.PAYMENTS_DASHBOARD_SESSION_TTL),
    dashboardLinks: {
      ttlMs: parseDuration(env.PAYMENTS_DASHBOARD_LINK_TTL),
      perEmail: parseRateLimit(env.PAYMENTS_DASHBOARD_LINK_LIMIT),
      perIp: parseRateLimit(env.PAYMENTS_DASHBOARD_LINK_IP_LIMIT),
    },
    publicUrl: env.PAYMENTS_PUBLIC_URL?.replace(/\/+$/, ''),
  }),
)

export type PaymentsConfig = ReturnType<typeof paymentsSection.build>
