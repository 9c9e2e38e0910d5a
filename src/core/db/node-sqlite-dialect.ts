import { type DatabaseConnection, SqliteDialect, SqliteDriver } from 'kysely'
import { CompiledQuery } from 'kysely'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import type { QueryObserver } from './query-observer.ts'

type SqliteValue = null | number | bigint | string | NodeJS.ArrayBufferView

const STATEMENT_CACHE_SIZE = 256

/** Statements that cannot write; anything else counts as a possible write (see `localWrites`). */
const READ_ONLY = /^\s*select\s/i

/** Kysely's SqliteDialect expects better-sqlite3's statement shape; this adapts node:sqlite to it. */
class NodeSqliteDatabase {
  /** Told of every statement run, through Kysely or directly (metrics, traces); none by default. */
  observer: QueryObserver | undefined
  #db: DatabaseSync
  #statements = new Map<string, { statement: StatementSync; reader: boolean; writes: boolean; toRow: (values: unknown[]) => Record<string, unknown> }>()
  #writes = 0
  #dataVersion: StatementSync | undefined

  constructor(db: DatabaseSync) {
    this.#db = db
  }

  prepare(sql: string) {
    let cached = this.#statements.get(sql)
    if (!cached) {
      const statement = this.#db.prepare(sql)
      const names = statement.columns().map((column) => column.name)
      // node:sqlite's row objects have a null prototype and slow (dictionary) properties; copying
      // each into a plain object cost more than SQLite's own work on a 40-row read. Rows read as
      // arrays and built with the same keys in the same order share one fast object shape.
      statement.setReturnArrays(true)
      cached = { statement, reader: names.length > 0, writes: !READ_ONLY.test(sql), toRow: rowBuilder(names) }
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value
        if (oldest !== undefined) this.#statements.delete(oldest)
      }
      this.#statements.set(sql, cached)
    }
    const { statement, reader, writes, toRow } = cached
    // Counted before running: a statement that fails half-way may still have written.
    if (writes) this.#writes++
    const observer = this.observer
    if (observer) {
      return {
        reader,
        all: (parameters: readonly unknown[]) => observed(observer, sql, () => (statement.all(...toSqlite(parameters)) as unknown as unknown[][]).map(toRow)),
        run: (parameters: readonly unknown[]) => observed(observer, sql, () => statement.run(...toSqlite(parameters))),
        iterate: function* (parameters: readonly unknown[]) {
          for (const row of statement.iterate(...toSqlite(parameters))) yield toRow(row as unknown as unknown[])
        },
      }
    }
    return {
      reader,
      all: (parameters: readonly unknown[]) => (statement.all(...toSqlite(parameters)) as unknown as unknown[][]).map(toRow),
      run: (parameters: readonly unknown[]) => statement.run(...toSqlite(parameters)),
      iterate: function* (parameters: readonly unknown[]) {
        for (const row of statement.iterate(...toSqlite(parameters))) yield toRow(row as unknown as unknown[])
      },
    }
  }

  get inTransaction(): boolean {
    return this.#db.isTransaction
  }

  /** How many statements run on this connection may have written (anything but a plain SELECT). */
  get localWrites(): number {
    return this.#writes
  }

  /**
   * SQLite's data_version: it moves when another connection (another process) commits, not
   * on this connection's own commits. Costs a read lock, like a small query.
   */
  externalVersion(): number {
    this.#dataVersion ??= this.#db.prepare('pragma data_version')
    return (this.#dataVersion.get() as { data_version: number }).data_version
  }

  close() {
    this.#statements.clear()
    if (this.#db.isOpen) this.#db.close()
  }
}

/** Runs one synchronous statement and tells `observer` how long it took. */
function observed<T>(observer: QueryObserver, sql: string, run: () => T): T {
  const startedAt = performance.now()
  let failed = true
  try {
    const result = run()
    failed = false
    return result
  } finally {
    observer({ sql, startedAt, durationMs: performance.now() - startedAt, failed })
  }
}

/** Turns a row read as an array into a plain object keyed by column name (a later duplicate name wins, as before). */
function rowBuilder(names: string[]): (values: unknown[]) => Record<string, unknown> {
  // An assignment to `__proto__` would set the prototype, not a property.
  if (names.includes('__proto__'))
    return (values) => Object.fromEntries(names.map((name, index) => [name, values[index]]))
  return (values) => {
    const row: Record<string, unknown> = {}
    for (let index = 0; index < names.length; index++) row[names[index]] = values[index]
    return row
  }
}

function toSqlite(parameters: readonly unknown[]): SqliteValue[] {
  return parameters.map((value) => {
    if (typeof value === 'boolean') return value ? 1 : 0
    if (value instanceof Date) return value.toISOString()
    if (value === undefined) return null
    return value as SqliteValue
  })
}

/**
 * Writers take the database lock when the transaction starts (BEGIN IMMEDIATE), not at their
 * first write: a deferred transaction that reads, then writes, can fail with SQLITE_BUSY when
 * another process (a second Triad instance on the same file) wrote in between.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #database: NodeSqliteDatabase
  constructor(config: ConstructorParameters<typeof SqliteDialect>[0], database: NodeSqliteDatabase) {
    super(config)
    this.#database = database
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }

  // Some errors end the transaction inside SQLite (a full disk: SQLITE_FULL, some I/O errors):
  // a ROLLBACK then fails with "no transaction is active", and that error would replace the one
  // that says what happened.
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#database.inTransaction) await super.rollbackTransaction(connection)
  }
}

class NodeSqliteDialect extends SqliteDialect {
  #config: ConstructorParameters<typeof SqliteDialect>[0]
  readonly database: NodeSqliteDatabase
  constructor(database: NodeSqliteDatabase) {
    const config = { database: database as never }
    super(config)
    this.#config = config
    this.database = database
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config, this.database)
  }
}

/**
 * A statement run straight on the SQLite connection, past Kysely's executor and its connection
 * mutex: the same statement cache, parameter conversion and row objects as Kysely's queries.
 * Only safe when the caller owns the connection: inside its own Kysely transaction, or, outside
 * one, when `inTransaction` is false (no transaction is open; a statement run synchronously
 * then cannot land inside someone else's). Anything else must go through Kysely and wait.
 */
export interface SqliteDirect {
  readonly inTransaction: boolean
  /** Statements run on this connection that may have written: unchanged means no local write. */
  readonly localWrites: number
  /** Unchanged means no other connection (process) has committed in between. */
  externalVersion(): number
  execute(sql: string, parameters: readonly unknown[]): { rows: unknown[]; numAffectedRows?: bigint }
  /** Told of every statement this connection runs. */
  observer: QueryObserver | undefined
}

const directs = new WeakMap<object, SqliteDirect>()

/** The direct access of a Kysely instance made by `createDb` on SQLite (undefined otherwise, and for its transactions). */
export function sqliteDirect(db: object): SqliteDirect | undefined {
  return directs.get(db)
}

/** Records `database` as the direct access of `db` (createDb). */
export function registerSqliteDirect(db: object, dialect: SqliteDialect): void {
  const database = (dialect as NodeSqliteDialect).database
  directs.set(db, {
    get inTransaction() {
      return database.inTransaction
    },
    get localWrites() {
      return database.localWrites
    },
    externalVersion: () => database.externalVersion(),
    set observer(observer: QueryObserver | undefined) {
      database.observer = observer
    },
    execute(sql, parameters) {
      const statement = database.prepare(sql)
      if (statement.reader) return { rows: statement.all(parameters) }
      const result = statement.run(parameters)
      return { rows: [], numAffectedRows: BigInt(result.changes) }
    },
  })
}

export function createSqliteDialect(path: string): SqliteDialect {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true })
  db.exec('PRAGMA busy_timeout = 5000')
  if (path !== ':memory:') {
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = NORMAL')
  }
  db.exec('PRAGMA foreign_keys = ON')
  return new NodeSqliteDialect(new NodeSqliteDatabase(db))
}
