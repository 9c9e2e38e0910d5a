import type { FastifyInstance } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Config } from './config.ts'
import { type Clock, systemClock } from './core/clock.ts'
import type { ServiceName } from './core/config/core-config.ts'
import { createDb, type Database } from './core/db/create-db.ts'
import { databaseFaultOf } from './core/db/errors.ts'
import { migrateToLatest, pendingMigrations } from './core/db/migrator.ts'
import { buildServer, type ServerOptions } from './core/http/build-server.ts'
import { holdPort, type PortHolder } from './core/http/port-holder.ts'
import { installMetrics } from './core/metrics/http-metrics.ts'
import { createPrometheusMetrics, noMetrics } from './core/metrics/registry.ts'
import { installRuntimeMetrics } from './core/metrics/runtime-metrics.ts'
import { telemetryHooks } from './core/telemetry/hooks.ts'
import { healthRoutes } from './core/http/health.ts'
import { createLifecycle, installLifecycleHooks, type Lifecycle } from './core/http/lifecycle.ts'
import { createIdGenerator, type IdGenerator } from './core/ids.ts'
import { closeRedis, connectRedis, createRedis } from './core/redis.ts'
import { packageInfo } from './core/version.ts'
import type { Secrets } from './core/security/keyring.ts'
import { openConfiguredSecrets, unsuppliedSecretsWarning } from './core/security/secrets.ts'
import type { ServiceBase } from './core/service.ts'
import { type Services, serviceLoaders } from './services/index.ts'

type ExtraDeps<N extends ServiceName> = Parameters<Services[N]['plugin']>[0] extends infer D ? Omit<D, keyof ServiceBase | 'config'> : never

export interface AppDeps {
  /** An open database; when given, the app does not close it. Otherwise DATABASE_URL is opened. */
  database?: Database
  clock?: Clock
  ids?: IdGenerator
  /** The secrets (tests: one store each); TRIAD_SECRETS_FILE by default. */
  secrets?: Secrets
  /** Replacement providers per service (fakes in tests). */
  services?: { [N in ServiceName]?: ExtraDeps<N> }
  /** Skip running migrations at start (they already ran). */
  skipMigrations?: boolean
  prettyLogs?: boolean
  /** The process's shutdown state (`triad serve` drives it on signals); a fresh one by default. */
  lifecycle?: Lifecycle
  /** Where log lines go instead of the standard output. */
  logStream?: NodeJS.WritableStream
  /**
   * The port `triad serve` holds from its first moment (`holdPortWhileStarting`): while the
   * database is unreachable or migrations run, its `/readyz` names which, and an unreachable
   * database is waited for instead of ending the start.
   */
  holder?: PortHolder
  /** How migrations run (tests hold them to see readiness meanwhile); `migrateServices` by default. */
  migrate?: (database: Database, names: readonly ServiceName[]) => Promise<void>
}

/** Runs the migrations of the given services, each with its own history table; `onApplied` hears of each one run. */
export async function migrateServices(database: Database, names: readonly ServiceName[], onApplied?: (service: ServiceName, name: string) => void): Promise<void> {
  for (const service of names) {
    await migrateToLatest(database.db, service, (await serviceLoaders[service]()).migrations, { onApplied: onApplied && ((name) => onApplied(service, name)) })
  }
}

/** How many migrations of the given services have not run yet. */
export async function pendingMigrationCount(database: Database, names: readonly ServiceName[]): Promise<number> {
  let pending = 0
  for (const service of names) pending += await pendingMigrations(database.db, service, (await serviceLoaders[service]()).migrations)
  return pending
}

type LoadedService = readonly [ServiceName, Services[ServiceName]]

async function loadServices(config: Config): Promise<LoadedService[]> {
  return Promise.all(config.core.services.map(async (name) => [name, await serviceLoaders[name]()] as const))
}

function serverOptionsFor(config: Config, services: LoadedService[], deps: Pick<AppDeps, 'prettyLogs' | 'logStream'>): ServerOptions {
  return {
    logLevel: config.core.logLevel,
    prettyLogs: deps.prettyLogs,
    logStream: deps.logStream,
    trustProxy: config.core.trustProxy,
    corsOrigins: config.core.corsOrigins,
    version: packageInfo.version,
    description: packageInfo.description,
    formats: Object.assign({}, ...services.map(([, service]) => service.formats ?? {})),
    unclaimedErrorBody: services.length === 1 ? services[0]?.[1].unclaimedErrorBody : undefined,
  }
}

/**
 * Listens on `address` at once, before the database is opened: until `buildApp` hands the socket
 * to the app, `/healthz` answers, `/readyz` fails naming what the start waits for, and every
 * other path answers 503 in its service's body (core/http/port-holder.ts).
 */
export async function holdPortWhileStarting(
  config: Config,
  address: { port: number; host: string },
  deps: Pick<AppDeps, 'prettyLogs' | 'logStream'> = {},
): Promise<PortHolder> {
  const services = await loadServices(config)
  const owners = services.map(([, service]) => ({ prefixes: service.paths, errorBody: service.errorBody }))
  return holdPort({ ...address, server: serverOptionsFor(config, services, deps), owners })
}

/** Waits between attempts to reach the database at start: 0.1 s doubling to 2 s. */
const startRetryMs = (attempt: number) => Math.min(2000, 100 * 2 ** attempt)

/**
 * Runs the migrations; with a holder, a database that cannot be reached is tried again (with
 * back-off, forever: the operator sees it in `/readyz` and the log) rather than ending the start.
 */
async function migrateWhenReachable(database: Database, config: Config, deps: AppDeps): Promise<void> {
  const migrate = deps.migrate ?? migrateServices
  for (let attempt = 0; ; attempt++) {
    try {
      deps.holder?.setState({ check: 'migrations', state: 'running' })
      await migrate(database, config.core.services)
      return
    } catch (error) {
      if (!deps.holder || databaseFaultOf(error) !== 'unavailable') throw error
      deps.holder.setState({ check: 'database', state: 'unreachable' })
      if (attempt % 10 === 0) deps.holder.log.warn({ err: error }, 'starting: the database is unreachable; trying again')
      await sleep(startRetryMs(attempt))
    }
  }
}

/**
 * Builds the HTTP application: the core (health, docs, errors, body parsing) and the
 * services named in `config.core.services`, on one database. Tests and `triad serve` both
 * use it; it does not listen.
 */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const ownsDatabase = deps.database === undefined
  const database = deps.database ?? (await createDb(config.core.databaseUrl, { standby: config.core.standby, preparedStatements: config.core.preparedStatements }))
  const services = await loadServices(config)
  const serverOptions = serverOptionsFor(config, services, deps)
  try {
    if (!deps.skipMigrations) await migrateWhenReachable(database, config, deps)
  } catch (error) {
    if (ownsDatabase) await database.destroy()
    throw error
  }
  // Services load and warm what they need (the speech engines) before the app takes the port.
  deps.holder?.setState({ check: 'services', state: 'starting' })
  const clock = deps.clock ?? systemClock
  // Fail-fast options (core/redis.ts): no request ever waits for Redis to come back.
  const redis = config.core.redisUrl ? createRedis(config.core.redisUrl) : undefined
  const lifecycle = deps.lifecycle ?? createLifecycle()
  const secrets = deps.secrets ?? openConfiguredSecrets(config.core, clock)
  const metrics = config.core.metrics.enabled ? createPrometheusMetrics() : undefined
  const base: ServiceBase = {
    core: config.core,
    database,
    clock,
    ids: deps.ids ?? createIdGenerator(clock),
    secrets,
    redis,
    lifecycle,
    metrics: metrics ?? noMetrics,
  }

  const app = await buildServer(serverOptions)
  installLifecycleHooks(app, lifecycle)
  if (redis) {
    // ioredis reconnects by itself and reports each failed attempt as an error event (printed
    // to the console when nobody listens); readiness and the rate-limit stores say what it
    // means, so this logs it once a minute at most.
    let loggedAt = -Infinity
    let lost = false
    redis.on('error', (error: Error) => {
      lost = true
      if (performance.now() - loggedAt < 60_000) return
      loggedAt = performance.now()
      app.log.warn({ err: error }, 'redis unreachable (ioredis keeps reconnecting; rate limits count in memory, the operator channel answers 503)')
    })
    redis.on('ready', () => {
      if (lost) app.log.info('redis reachable again')
      lost = false
      loggedAt = -Infinity
    })
    // The first connection gets a moment before the app serves (so the first requests count in
    // Redis), never more: without Redis the app starts in its degraded mode.
    app.addHook('onReady', async () => connectRedis(redis, 1000))
  }
  if (metrics) {
    installMetrics(app, metrics, config.core.metrics)
    installRuntimeMetrics(metrics, { database, redis })
  }
  telemetryHooks.observeDatabase?.(database)
  app.addHook('onClose', async () => {
    await telemetryHooks.flush?.()
    if (redis) closeRedis(redis)
    if (ownsDatabase) await database.destroy()
  })
  // Closed without a stop signal first (tests, commands): nothing waits for a grace period.
  app.addHook('preClose', async () => {
    if (!lifecycle.draining) lifecycle.endGrace()
  })
  await app.register(healthRoutes, { database, lifecycle, redis })
  for (const [name, service] of services) {
    const extra = deps.services?.[name] ?? {}
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each service's own config section and extras match its definition.
    const plugin = (service.plugin as (deps: any) => Parameters<FastifyInstance['register']>[0])({ ...base, ...extra, config: config[name] })
    await app.register(plugin)
  }
  // Services have read (or generated) their keys while registering: one warning for all of them.
  const warning = unsuppliedSecretsWarning(secrets, config.core)
  if (warning) app.log.warn(warning)
  return app
}
