import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { type AppDeps, buildApp } from '../../src/app.ts'
import { type Config, loadConfig } from '../../src/config.ts'
import { createManualClock, type ManualClock } from '../../src/core/clock.ts'
import { createManualScheduler } from '../../src/core/scheduler.ts'
import type { ServiceName } from '../../src/core/config/core-config.ts'
import { createDb, type Database } from '../../src/core/db/create-db.ts'
import { createLifecycle, type Lifecycle } from '../../src/core/http/lifecycle.ts'
import { createIdGenerator } from '../../src/core/ids.ts'
import { noMetrics } from '../../src/core/metrics/registry.ts'
import type { ServiceBase } from '../../src/core/service.ts'
import { createSecrets, type Secrets } from '../../src/core/security/keyring.ts'
import { memorySecretStore, type SecretStore } from '../../src/core/security/secrets-file.ts'

/** Anything with node:test's `after` (a test context, or `{ after }` imported from node:test). */
export interface Cleanup {
  after(fn: () => Promise<void> | void): void
}

/** The database the suite runs on: PostgreSQL when TEST_DATABASE_URL is set, else SQLite in memory. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'sqlite::memory:'
export const testDialect = testDatabaseUrl.startsWith('postgres') ? 'postgres' : 'sqlite'

/**
 * The `skip` of suites whose outcome does not depend on the database engine (speech, recognition,
 * CORS, pages in a browser): the PostgreSQL pass of the suite skips them, since they would only
 * repeat what its SQLite pass ran. Suites that read or write rows whose SQL differs by engine
 * run in both passes.
 */
export const engineIndependent: string | false = testDialect === 'postgres' && 'does not depend on the database engine: the SQLite pass of the suite runs it'

/**
 * Opens a fresh, empty database: an in-memory SQLite database, or a new schema in the
 * PostgreSQL database of TEST_DATABASE_URL, dropped when the test ends.
 */
export async function createTestDatabase(t: Cleanup): Promise<Database> {
  if (testDialect === 'sqlite') {
    const database = await createDb(testDatabaseUrl)
    t.after(() => database.destroy())
    return database
  }
  const schema = `test_${randomBytes(6).toString('hex')}`
  const database = await createDb(testDatabaseUrl, { schema, poolSize: 5 })
  t.after(async () => {
    // A test may have closed the database on purpose (to see the app without it): drop the
    // schema over a connection of our own.
    const cleaner = await createDb(testDatabaseUrl, { poolSize: 1 })
    try {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(cleaner.db)
    } finally {
      await cleaner.destroy()
      await database.destroy().catch(() => {})
    }
  })
  return database
}

/**
 * An empty schema of its own in the PostgreSQL database of TEST_DATABASE_URL, dropped when the
 * test ends; answers the URL a Triad process connects with to work in it (`search_path`).
 */
export async function createTestSchemaUrl(t: Cleanup, prefix = 'test'): Promise<string> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`
  const admin = await createDb(testDatabaseUrl, { poolSize: 1 })
  await sql`create schema ${sql.id(schema)}`.execute(admin.db)
  t.after(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db)
    await admin.destroy()
  })
  const url = new URL(testDatabaseUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

// Each test database has its own secrets, in memory: the instances a test starts on one database
// share them (as instances of one deployment share the secrets file), and parallel test files
// never share a file.
const storesOfDatabases = new WeakMap<Database, SecretStore>()

/** The secrets store of a test database (created empty on first use). */
export function secretStoreOf(database: Database): SecretStore {
  let store = storesOfDatabases.get(database)
  if (!store) {
    store = memorySecretStore()
    storesOfDatabases.set(database, store)
  }
  return store
}

/**
 * The configuration of a test app: defaults, quiet logs, the test database, plus `env`. Speech
 * threads start on first use (AVATAR_TTS_WARM=false): most apps a test builds never synthesise,
 * and warming costs each of them seconds of CPU; the tests of warming turn it on.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ DATABASE_URL: testDatabaseUrl, LOG_LEVEL: 'silent', AVATAR_TTS_WARM: 'false', ...env })
}

export interface TestAppOptions {
  /** Services to mount; all by default. */
  services?: ServiceName[]
  /** Environment variables, as an operator would set them. */
  env?: Record<string, string>
  /** The clock; a manual clock at 2026-01-01 by default, moved with `clock.advance(ms)`. */
  clock?: ManualClock
  /** An existing database (to restart an app on the same data); a fresh one by default. */
  database?: Database
  /** Fake providers per service. */
  deps?: AppDeps['services']
  /** Where the app's log lines go (with `env: { LOG_LEVEL }`). */
  logStream?: NodeJS.WritableStream
  /** Where the app keeps its secrets; the test database's own store (in memory) by default. */
  secretStore?: SecretStore
  /** The shutdown state (to drain before `app.close()`, as a stop signal does); a fresh one by default. */
  lifecycle?: Lifecycle
}

export interface TestApp {
  app: FastifyInstance
  database: Database
  clock: ManualClock
  config: Config
  /** The app's secrets (its keyrings), over `secretStore`. */
  secrets: Secrets
  secretStore: SecretStore
}

/**
 * Builds the app on a fresh database (migrated), with a manual clock, and closes it when
 * the test ends. Use `app.inject()` for requests, or `app.listen({ port: 0, host: '127.0.0.1' })`
 * for a real socket.
 */
export async function buildTestApp(t: Cleanup, options: TestAppOptions = {}): Promise<TestApp> {
  const env = { ...options.env }
  if (options.services) env.TRIAD_SERVICES = options.services.join(',')
  const config = testConfig(env)
  const database = options.database ?? (await createTestDatabase(t))
  const clock = options.clock ?? createManualClock()
  const secretStore = options.secretStore ?? secretStoreOf(database)
  const secrets = createSecrets(secretStore, clock)
  // Background work waits for the test: the payments webhook worker runs only when a test runs
  // its scheduler (a worker polling on its own would race the end-of-test schema drop).
  const services = { ...options.deps, payments: { scheduler: createManualScheduler(clock), ...options.deps?.payments } }
  const app = await buildApp(config, { database, clock, ids: createIdGenerator(clock), secrets, services, logStream: options.logStream, lifecycle: options.lifecycle })
  t.after(() => app.close())
  return { app, database, clock, config, secrets, secretStore }
}

/**
 * What a service's plugin or commands get, over the test app's database, clock and secrets:
 * for tests that call a service or a command directly. `secrets` replaces the app's keyrings
 * (another process's view of the same store).
 */
export function serviceBaseOf(test: TestApp, options: { secrets?: Secrets } = {}): ServiceBase {
  return {
    core: test.config.core,
    database: test.database,
    clock: test.clock,
    ids: createIdGenerator(test.clock),
    secrets: options.secrets ?? test.secrets,
    lifecycle: createLifecycle(),
    metrics: noMetrics,
  }
}
