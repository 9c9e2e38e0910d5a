import { type DatabaseConnection, SqliteDialect, SqliteDriver } from 'kysely'
import { CompiledQuery } from 'kysely'
import { DatabaseSync, type StatementSync } from 'node:sqlite'

type SqliteValue = null | number | bigint | string | NodeJS.ArrayBufferView

const STATEMENT_CACHE_SIZE = 256

/** Kysely's SqliteDialect expects better-sqlite3's statement shape; this adapts node:sqlite to it. */
class NodeSqliteDatabase {
  #db: DatabaseSync
  #statements = new Map<string, { statement: StatementSync; reader: boolean }>()

  constructor(db: DatabaseSync) {
    this.#db = db
  }

  prepare(sql: string) {
    let cached = this.#statements.get(sql)
    if (!cached) {
      const statement = this.#db.prepare(sql)
      cached = { statement, reader: statement.columns().length > 0 }
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value
        if (oldest !== undefined) this.#statements.delete(oldest)
      }
      this.#statements.set(sql, cached)
    }
    const { statement, reader } = cached
    return {
      reader,
      all: (parameters: readonly unknown[]) => statement.all(...toSqlite(parameters)).map((row) => ({ ...row })),
      run: (parameters: readonly unknown[]) => statement.run(...toSqlite(parameters)),
      iterate: function* (parameters: readonly unknown[]) {
        for (const row of statement.iterate(...toSqlite(parameters))) yield { ...row }
      },
    }
  }

  close() {
    this.#statements.clear()
    if (this.#db.isOpen) this.#db.close()
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
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

class NodeSqliteDialect extends SqliteDialect {
  #config: ConstructorParameters<typeof SqliteDialect>[0]
  constructor(config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config)
    this.#config = config
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config)
  }
}

export function createSqliteDialect(path: string): SqliteDialect {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true })
  db.exec('PRAGMA busy_timeout = 5000')
  if (path !== ':memory:') {
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = NORMAL')
  }
  db.exec('PRAGMA foreign_keys = ON')
  return new NodeSqliteDialect({ database: new NodeSqliteDatabase(db) as never })
}
