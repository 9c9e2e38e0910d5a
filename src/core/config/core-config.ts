import { Type } from '@sinclair/typebox'
import { parsePostgresUrl } from '../db/postgres-url.ts'
import { parseDuration as parseDurationMs } from './duration.ts'
import { defineSection, Env, splitList } from './load-config.ts'
import { parseRedisUrl, REDIS_URL_PATTERN, SENTINEL_URL_FORM } from './redis-url.ts'

export const SERVICE_NAMES = ['authn', 'avatar', 'payments'] as const
export type ServiceName = (typeof SERVICE_NAMES)[number]

/** Beside the default SQLite database: fine for development, not apart from the data (see docs/operations.md). */
const DEFAULT_SECRETS_FILE = './data/secrets.json'

const DATABASE_URL_PATTERN = '^(sqlite:.+|postgres(ql)?://.+)$'

/** A routed read waits for the standby at most this long: the wait comes out of the request's database time. */
const MAX_READ_WAIT_MS = 1000

/** The URL as given, once it reads as libpq reads it: an unknown sslmode, say, fails the start naming `variable`. */
function checkedDatabaseUrl(url: string, variable: string): string {
  if (/^postgres(ql)?:\/\//.test(url)) parsePostgresUrl(url, variable)
  return url
}

/** The standby of DATABASE_READ_URL, checked against DATABASE_URL (a standby needs a PostgreSQL primary). */
function standbyOf(databaseUrl: string, readUrl: string | undefined, maxWait: string) {
  if (readUrl === undefined) return undefined
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_READ_URL names a PostgreSQL standby of the primary, so DATABASE_URL must be postgres://… too (it is SQLite here); unset DATABASE_READ_URL')
  }
  const maxWaitMs = parseDurationMs(maxWait)
  if (maxWaitMs > MAX_READ_WAIT_MS) throw new Error(`DATABASE_READ_MAX_WAIT must be at most ${MAX_READ_WAIT_MS}ms (got ${maxWait})`)
  return { url: checkedDatabaseUrl(readUrl, 'DATABASE_READ_URL'), maxWaitMs }
}

/** The URL as given, once it is known to parse (a malformed sentinel list fails the start, naming what is wrong). */
function checkedRedisUrl(url: string): string {
  parseRedisUrl(url)
  return url
}

export const coreSection = defineSection(
  Type.Object({
    PORT: Env.port(8080),
    HOST: Env.string('a host name or IP address to listen on', { default: '127.0.0.1' }),
    DATABASE_URL: Env.string('sqlite:<path>, sqlite::memory: or postgres://user@host:port/database (several host:port, comma-separated, as pg_autoctl show uri gives them: writes go to whichever takes them)', {
      default: 'sqlite:./data/triad.sqlite',
      pattern: DATABASE_URL_PATTERN,
    }),
    DATABASE_READ_URL: Env.optionalString('postgres://user@host:port/database of a streaming standby of DATABASE_URL (unset: every read on the primary)', {
      pattern: '^postgres(ql)?://.+',
    }),
    DATABASE_READ_MAX_WAIT: Env.duration('50ms'),
    DATABASE_PREPARED_STATEMENTS: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      default: 'on',
      description: 'on or off (PostgreSQL): on prepares each hot statement once per connection; off sends every statement unnamed, as PgBouncer before 1.21 in transaction mode needs',
    }),
    REDIS_URL: Env.optionalString(`a redis:// or rediss:// URL (one server), or ${SENTINEL_URL_FORM} (Redis Sentinel)`, { pattern: REDIS_URL_PATTERN }),
    TRIAD_SERVICES: Env.string(`a comma-separated list of ${SERVICE_NAMES.join(', ')}`, {
      default: SERVICE_NAMES.join(','),
      pattern: `^\\s*(${SERVICE_NAMES.join('|')})\\s*(,\\s*(${SERVICE_NAMES.join('|')})\\s*)*$`,
    }),
    LOG_LEVEL: Env.enumOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    CORS_ORIGINS: Env.optionalString('a comma-separated list of origins (https://app.example.org) or *'),
    TRUST_PROXY: Env.optionalString('true, or a comma-separated list of proxy addresses or CIDR ranges'),
    SHUTDOWN_TIMEOUT: Env.duration('10s'),
    TRIAD_SECRETS_FILE: Env.optionalString(
      'the path of the file that keeps generated secrets (mode 0600), kept apart from the database and its backups (unset: ./data/secrets.json)',
    ),
    METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'serve Prometheus metrics at GET /metrics on this port of METRICS_HOST (unset: not on a port of their own)' })),
    METRICS_HOST: Env.string('the address the metrics port listens on', { default: '127.0.0.1' }),
    METRICS_TOKEN: Env.optionalString(
      'a bearer token (16 characters or more) that GET /metrics requires; without METRICS_PORT, metrics are then served on the main port (unset with METRICS_PORT unset: no metrics)',
      { pattern: '^\\S{16,}$' },
    ),
    NODE_ENV: Env.optionalString('production, or anything else for development; production warns loudly about secrets not supplied from outside'),
  }),
  (env) => ({
    port: env.PORT,
    host: env.HOST,
    databaseUrl: checkedDatabaseUrl(env.DATABASE_URL, 'DATABASE_URL'),
    /** Where lag-tolerant reads may go (core/db/read-replica.ts); undefined without DATABASE_READ_URL. */
    standby: standbyOf(env.DATABASE_URL, env.DATABASE_READ_URL, env.DATABASE_READ_MAX_WAIT),
    /** PostgreSQL: hot statements as named prepared statements of each connection (core/db/named-statements.ts). */
    preparedStatements: env.DATABASE_PREPARED_STATEMENTS === 'on',
    redisUrl: env.REDIS_URL === undefined ? undefined : checkedRedisUrl(env.REDIS_URL),
    services: [...new Set(splitList(env.TRIAD_SERVICES))] as ServiceName[],
    logLevel: env.LOG_LEVEL,
    corsOrigins: splitList(env.CORS_ORIGINS),
    trustProxy: env.TRUST_PROXY === 'true' ? (true as const) : splitList(env.TRUST_PROXY),
    shutdownTimeoutMs: parseDurationMs(env.SHUTDOWN_TIMEOUT),
    secretsFile: env.TRIAD_SECRETS_FILE ?? DEFAULT_SECRETS_FILE,
    /** The operator named the secrets file: keys in it count as supplied from outside. */
    secretsFileChosen: env.TRIAD_SECRETS_FILE !== undefined,
    production: env.NODE_ENV === 'production',
    metrics: {
      enabled: env.METRICS_PORT !== undefined || env.METRICS_TOKEN !== undefined,
      port: env.METRICS_PORT,
      host: env.METRICS_HOST,
      token: env.METRICS_TOKEN,
    },
  }),
)

export type CoreConfig = ReturnType<typeof coreSection.build>
