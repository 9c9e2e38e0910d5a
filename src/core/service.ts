import type { FastifyPluginAsync } from 'fastify'
import type { CommandGroup } from './cli/command.ts'
import type { Redis } from 'ioredis'
import type { Clock } from './clock.ts'
import type { CoreConfig } from './config/core-config.ts'
import type { Database } from './db/create-db.ts'
import type { ErrorBodyFormatter } from './errors/normalize.ts'
import type { MigrationSet } from './db/migrator.ts'
import type { Lifecycle } from './http/lifecycle.ts'
import type { MetricsRegistry } from './metrics/registry.ts'
import type { IdGenerator } from './ids.ts'
import type { Secrets } from './security/keyring.ts'

/** What every service receives from the process that mounts it. */
export interface ServiceBase {
  core: CoreConfig
  database: Database
  clock: Clock
  ids: IdGenerator
  /** Generated and supplied secrets (keyrings by name), kept outside the database. */
  secrets: Secrets
  /** Present when REDIS_URL is set: counters shared by every instance. */
  redis?: Redis
  /** Serving, draining after a stop signal, or past the grace period. */
  lifecycle: Lifecycle
  /** Where the service declares and records its metrics (no-ops when metrics are off). */
  metrics: MetricsRegistry
}

/**
 * A service as the process sees it: its migrations and how to mount it. `TConfig` is the
 * service's own configuration section; `TExtra` its replaceable dependencies (providers),
 * which tests set to fakes.
 */
export interface ServiceDefinition<TConfig, TExtra = Record<string, never>> {
  name: string
  migrations: MigrationSet
  plugin(deps: ServiceBase & { config: TConfig } & Partial<TExtra>): FastifyPluginAsync
  /**
   * The path prefixes its routes live under, and its error body: before the routes exist (while
   * the instance starts) a request under these prefixes is still answered in this body.
   * test/core/starting.test.ts checks every route falls under its service's prefixes.
   */
  paths: readonly string[]
  errorBody: ErrorBodyFormatter
  /** String formats its schemas name (`format: 'iban'`), checked with every other field of a request. */
  formats?: Record<string, (value: string) => boolean>
  /**
   * The body of errors on paths no route claims when this service is the only one served (the
   * whole server is then its API); the core's own body otherwise.
   */
  unclaimedErrorBody?: ErrorBodyFormatter
  /** The service's `triad <name> …` commands, if it has any. */
  commands?(env: ServiceCliEnvironment<TConfig>): CommandGroup
}

/** What a service's commands get: the same dependencies as its HTTP plugin, opened on demand. */
export interface ServiceCliEnvironment<TConfig> {
  /** Opens the database, brings this service's schema up to date, runs `work`, closes it. */
  withService<T>(work: (deps: ServiceBase & { config: TConfig }) => Promise<T>): Promise<T>
}
