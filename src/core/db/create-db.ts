import { Kysely, type LogEvent, PostgresDialect, sql } from 'kysely'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import pg from 'pg'
import { createSqliteDialect, registerSqliteDirect, sqliteDirect } from './node-sqlite-dialect.ts'
import { combineObservers, type QueryObserver } from './query-observer.ts'
import { createGuardedPool } from './pg-pool.ts'
import { withHeldConnections } from './held-connections.ts'
import { createStandbyReads, type RoutedReadObserver } from './read-replica.ts'

export type DialectName = 'sqlite' | 'postgres'

// Money and counts are int8 in PostgreSQL; pg returns them as strings unless told otherwise.
// Every such value Triad stores fits in a double exactly (minor units well below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => {
  const parsed = Number(value)
  if (!Number.isSafeInteger(parsed)) throw new RangeError(`int8 value ${value} exceeds the safe integer range`)
  return parsed
})

export interface Database {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each service narrows this to its own tables.
  db: Kysely<any>
  dialect: DialectName
  destroy(): Promise<void>
  /** Adds an observer told of every statement run from now on (metrics, traces). */
  observeQueries(observer: QueryObserver): void
  /**
   * Answers once the database has run `select 1`: for readiness. PostgreSQL runs it over a
   * connection of its own, so that a pool busy with slow work does not look unreachable.
   */
  ping(): Promise<void>
  /** PostgreSQL: the pool's connections right now; SQLite has one connection and no pool. */
  poolStats?(): { total: number; idle: number; waiting: number }
  /**
   * Runs `work`, a read that tolerates lag (a list page, an aggregate), on one connection: the
   * standby's (DATABASE_READ_URL) once it has replayed every write the primary acknowledged
   * before the read began, else the primary's; without a standby, `work(db)`. Never for a read
   * that decides a write, nor inside a transaction (core/db/read-replica.ts).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as `db`.
  routedRead<T>(work: (db: Kysely<any>) => Promise<T>): Promise<T>
  /** With a standby: adds an observer told where each routed read ran, and why (metrics). */
  observeRoutedReads?(observer: RoutedReadObserver): void
}

export interface CreateDbOptions {
  /** PostgreSQL only: the schema to work in (created if missing); tests use one per app. */
  schema?: string
  /**
   * PostgreSQL only: keep a connection only on a primary that replicates synchronously
   * (core/db/pg-hosts.ts). Default: when the URL names several hosts (a failover topology).
   */
  requireSynchronousStandby?: boolean
  /** PostgreSQL only: pool size per instance. */
  poolSize?: number
  /**
   * PostgreSQL only: whether hot statements go as named prepared statements of each connection
   * (core/db/named-statements.ts; DATABASE_PREPARED_STATEMENTS). Off, every statement goes
   * unnamed, as a pooler in transaction mode needs. On by default.
   */
  preparedStatements?: boolean
  /** PostgreSQL only: named statements per connection at most (100 by default). */
  preparedStatementsPerConnection?: number
  /**
   * Kysely's log hook: every statement Kysely runs, with its duration (the query counts of
   * docs/scaling.md). On SQLite the prepared fast path runs past Kysely and is not seen.
   */
  log?: (event: LogEvent) => void
  /** PostgreSQL only: a streaming standby of `url` for `routedRead` (DATABASE_READ_URL), and how long a read waits for it to catch up. */
  standby?: { url: string; maxWaitMs: number }
}

function dialectOf(url: string): DialectName {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres'
  if (url.startsWith('sqlite:')) return 'sqlite'
  throw new Error(`DATABASE_URL must start with sqlite: or postgres:// (got ${JSON.stringify(url)})`)
}

export async function createDb(url: string, options: CreateDbOptions = {}): Promise<Database> {
  const dialect = dialectOf(url)
  if (dialect === 'sqlite') {
    const path = url.slice('sqlite:'.length)
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true })
    const sqliteDialect = createSqliteDialect(path)
    const held = withHeldConnections(sqliteDialect)
    const db = new Kysely({ dialect: held.dialect, log: options.log })
    held.register(db)
    registerSqliteDirect(db, sqliteDialect)
    const observers: QueryObserver[] = []
    return {
      db,
      dialect,
      destroy: () => db.destroy(),
      routedRead: (work) => work(db),
      ping: async () => {
        await sql`select 1`.execute(db)
      },
      observeQueries: (observer) => {
        observers.push(observer)
        const direct = sqliteDirect(db)
        if (direct) direct.observer = combineObservers(observers)
      },
    }
  }
  const poolSize = options.poolSize ?? 10
  const preparedPerConnection = options.preparedStatements === false ? 0 : options.preparedStatementsPerConnection
  const guarded = createGuardedPool({
    connectionString: url,
    max: poolSize,
    schema: options.schema,
    requireSynchronousStandby: options.requireSynchronousStandby,
    preparedPerConnection,
  })
  // Kysely's log hook times every query once any observer wants it; until then it costs one
  // call that returns (a PostgreSQL round trip dwarfs both).
  let observer: QueryObserver | undefined
  const observers: QueryObserver[] = []
  const log = (event: LogEvent) => {
    options.log?.(event)
    if (!observer) return
    const durationMs = event.queryDurationMillis
    observer({ sql: event.query.sql, startedAt: performance.now() - durationMs, durationMs, failed: event.level === 'error' })
  }
  const held = withHeldConnections(new PostgresDialect({ pool: guarded.pool }))
  const db = new Kysely({ dialect: held.dialect, log })
  held.register(db)
  const standby = options.standby
    ? createStandbyReads({ primary: guarded.pool, standby: options.standby, schema: options.schema, poolSize, preparedPerConnection, log })
    : undefined
  if (options.schema) await sql`create schema if not exists ${sql.id(options.schema)}`.execute(db)
  return {
    db,
    dialect,
    destroy: async () => {
      await standby?.destroy()
      await db.destroy()
    },
    routedRead: standby ? standby.run : (work) => work(db),
    observeRoutedReads: standby?.observe,
    observeQueries: (added) => {
      observers.push(added)
      observer = combineObservers(observers)
    },
    poolStats: guarded.stats,
    ping: guarded.ping,
  }
}
