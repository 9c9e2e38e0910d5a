import { Kysely, type LogEvent, PostgresDialect, sql } from 'kysely'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import pg from 'pg'
import { createSqliteDialect, registerSqliteDirect, sqliteDirect } from './node-sqlite-dialect.ts'
import { combineObservers, type QueryObserver } from './query-observer.ts'
import { createGuardedPool } from './pg-pool.ts'

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
}

export interface CreateDbOptions {
  /** PostgreSQL only: the schema to work in (created if missing); tests use one per app. */
  schema?: string
  /** PostgreSQL only: pool size per instance. */
  poolSize?: number
  /**
   * Kysely's log hook: every statement Kysely runs, with its duration (the query counts of
   * docs/scaling.md). On SQLite the prepared fast path runs past Kysely and is not seen.
   */
  log?: (event: LogEvent) => void
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
    const db = new Kysely({ dialect: sqliteDialect, log: options.log })
    registerSqliteDirect(db, sqliteDialect)
    const observers: QueryObserver[] = []
    return {
      db,
      dialect,
      destroy: () => db.destroy(),
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
  const guarded = createGuardedPool({ connectionString: url, max: options.poolSize ?? 10, schema: options.schema })
  // Kysely's log hook times every query once any observer wants it; until then it costs one
  // call that returns (a PostgreSQL round trip dwarfs both).
  let observer: QueryObserver | undefined
  const observers: QueryObserver[] = []
  const db = new Kysely({
    dialect: new PostgresDialect({ pool: guarded.pool }),
    log: (event) => {
      options.log?.(event)
      if (!observer) return
      const durationMs = event.queryDurationMillis
      observer({ sql: event.query.sql, startedAt: performance.now() - durationMs, durationMs, failed: event.level === 'error' })
    },
  })
  if (options.schema) await sql`create schema if not exists ${sql.id(options.schema)}`.execute(db)
  return {
    db,
    dialect,
    destroy: () => db.destroy(),
    observeQueries: (added) => {
      observers.push(added)
      observer = combineObservers(observers)
    },
    poolStats: guarded.stats,
    ping: guarded.ping,
  }
}
