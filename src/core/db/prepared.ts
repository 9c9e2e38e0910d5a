import { type Compilable, CompiledQuery, type Kysely, type Transaction } from 'kysely'
import type { DialectName } from './create-db.ts'
import { type SqliteDirect, sqliteDirect } from './node-sqlite-dialect.ts'
import { underHold } from './held-commit-scope.ts'
import { WriteBatch } from './write-batch.ts'

/** Kysely transactions opened by `ownSqliteTransaction`: they hold the SQLite connection. */
const owned = new WeakMap<object, SqliteDirect>()

/**
 * Lets the prepared statements of a SQLite transaction run straight on the connection it holds
 * (Kysely's executor costs as much as a small statement). `withTransaction` does this for
 * every transaction it opens.
 */
export function ownSqliteTransaction<DB>(root: Kysely<DB>, trx: Transaction<DB>): void {
  const direct = sqliteDirect(root)
  if (direct) owned.set(trx, direct)
}

/**
 * The direct SQLite access `db` may use now: its own transaction's, or the root database's
 * when no transaction is open on the connection (a statement run synchronously then cannot
 * land inside another request's transaction); else undefined, and the query waits in Kysely.
 */
function directFor(db: object): SqliteDirect | undefined {
  const own = owned.get(db)
  if (own) return own
  const root = sqliteDirect(db)
  // Under a commit hold the root's statements go through Kysely, which routes them (core/db/held-commit.ts).
  return root && !root.inTransaction && !underHold(db) ? root : undefined
}

const STAND_IN = '\u0000value:'

interface CompiledWithStandIns<K extends string> {
  sql: string
  /** The names of the values, in the order of the statement's parameters. */
  order: K[]
}

/**
 * Compiles the query `build` makes from stand-ins for its values, so that its SQL can be
 * cached and run again with new values. Every value must come from the stand-ins: a literal
 * would be baked into the cached SQL, so it is refused.
 */
function compileWithStandIns<DB, K extends string>(
  db: Kysely<DB>,
  build: (db: Kysely<DB>, values: Record<K, never>) => Compilable<unknown>,
): CompiledWithStandIns<K> {
  const standIns = new Proxy({} as Record<K, never>, { get: (_target, name) => `${STAND_IN}${String(name)}` })
  const compiled = build(db, standIns).compile()
  const order = compiled.parameters.map((parameter) => {
    if (typeof parameter !== 'string' || !parameter.startsWith(STAND_IN)) throw new Error(`a literal value in a query compiled once: ${compiled.sql}`)
    return parameter.slice(STAND_IN.length) as K
  })
  return { sql: compiled.sql, order }
}

/**
 * A query whose SQL is built once per dialect, then run with new parameters. On hot paths
 * (GET /transactions/{id}, captures, chat turns) Kysely's builder and compiler cost more than
 * SQLite's own execution; the statement text is the same every time, so it is built on first use.
 *
 * `build` receives a parameter object whose properties stand for the values; every value the
 * query needs must come from it (a literal would be baked into the cached SQL — refused).
 */
export function prepared<DB, K extends string, R>(build: (db: Kysely<DB>, parameters: Record<K, never>, dialect: DialectName) => Compilable<R>) {
  const cache = new Map<DialectName, CompiledWithStandIns<K>>()
  const run = (db: Kysely<DB>, dialect: DialectName, sql: string, parameters: unknown[]): Promise<{ rows: R[]; numAffectedRows?: bigint }> => {
    const direct = dialect === 'sqlite' ? directFor(db) : undefined
    if (direct) return Promise.resolve(direct.execute(sql, parameters) as { rows: R[]; numAffectedRows?: bigint })
    return db.executeQuery<R>(CompiledQuery.raw(sql, parameters) as CompiledQuery<R>)
  }
  /**
   * Runs the query on `db`; given a `WriteBatch` (a write whose result nobody reads), queues it
   * there on PostgreSQL (answering no rows) and runs it at once on SQLite.
   */
  return async (db: Kysely<DB> | WriteBatch<DB>, dialect: DialectName, values: Record<K, unknown>): Promise<{ rows: R[]; numAffectedRows?: bigint }> => {
    const executor = db instanceof WriteBatch ? db.trx : db
    let entry = cache.get(dialect)
    if (!entry) {
      entry = compileWithStandIns<DB, K>(executor, (root, standIns) => build(root, standIns, dialect))
      cache.set(dialect, entry)
    }
    const { sql } = entry
    const parameters = entry.order.map((name) => values[name])
    if (!(db instanceof WriteBatch)) return run(db, dialect, sql, parameters)
    let ran: { rows: R[]; numAffectedRows?: bigint } = { rows: [] }
    await db.add(sql, parameters, async () => {
      ran = await run(executor, dialect, sql, parameters)
    })
    return ran
  }
}
