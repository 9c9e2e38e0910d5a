import { setTimeout as sleep } from 'node:timers/promises'
import { CompiledQuery, type ControlledTransaction, type DatabaseConnection, type Kysely, type QueryResult, sql, type Transaction } from 'kysely'
import { isRetryableConflict } from './errors.ts'
import { driverTokens, type HeldUnit, holds } from './held-commit-scope.ts'
import { ownSqliteTransaction } from './prepared.ts'

/**
 * A unit of work whose commit waits for something only known after its last statement: an HTTP
 * answer that must commit together with the change it reports (an `Idempotency-Key`'s stored
 * response). Inside `holdCommits(hold, …)`, the first `withTransaction` on `hold`'s database
 * opens the transaction and hands its result back to the caller without committing; later
 * ones run inside it, each in a savepoint of its own; every other statement of the same unit of
 * work on that database runs on the held connection too (so it sees its own writes, and on
 * SQLite does not wait behind them). The owner then writes what it must and commits, or rolls
 * back. Nothing outside the database may happen between: work deferred with `afterCommit` runs
 * once the commit is done.
 */
export class CommitHold implements HeldUnit {
  readonly #db: Kysely<unknown>
  readonly #dialect: 'sqlite' | 'postgres'
  #trx: ControlledTransaction<unknown> | undefined
  #opening: Promise<ControlledTransaction<unknown>> | undefined
  #ended = false
  /** The driver connection the transaction holds, borrowed by the unit's other statements. */
  connection: DatabaseConnection | undefined
  #claimable = false
  #afterCommit: Array<() => Promise<void>> = []

  /** The driver of `db` (withHeldConnections): only its statements are routed by this hold. */
  readonly driverToken: object | undefined

  constructor(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres') {
    this.#db = db
    this.#dialect = dialect
    this.driverToken = driverTokens.get(db)
  }

  /** Whether `db` is the database this hold is for (a root Kysely instance). */
  holds(db: object): boolean {
    return db === this.#db && !this.#ended
  }

  /** The open transaction, once a write has opened it. */
  get transaction(): Transaction<unknown> | undefined {
    return this.#trx
  }

  get ended(): boolean {
    return this.#ended
  }

  claimOpening(): boolean {
    const claimed = this.#claimable
    this.#claimable = false
    return claimed
  }

  /** `withTransaction` under the hold: the first opens (and retries conflicts as usual), later ones run in savepoints. */
  async run<DB, T>(work: (trx: Transaction<DB>) => Promise<T>, options: { isolation?: 'read committed' | 'serializable'; maxAttempts?: number }): Promise<T> {
    const open = this.#trx ?? (await this.#opening)
    if (open) return inSavepoint(open as unknown as Transaction<DB>, work)
    const maxAttempts = options.maxAttempts ?? 8
    for (let attempt = 1; ; attempt++) {
      const trx = await this.#open(options.isolation)
      try {
        return await work(trx as unknown as Transaction<DB>)
      } catch (error) {
        await this.#release()
        if (attempt >= maxAttempts || !isRetryableConflict(error)) throw error
        await sleep(Math.random() * 5 * 2 ** attempt)
      }
    }
  }

  /**
   * A statement run on the root database under the hold: a write joins the transaction (opening
   * it), in a savepoint of its own so that its failure is its own, as it would be alone; a read
   * runs there once the transaction is open, else as usual.
   */
  async statement(query: CompiledQuery, acquire: () => Promise<DatabaseConnection>, release: (connection: DatabaseConnection) => Promise<void>): Promise<QueryResult<unknown>> {
    const writes = WRITE.test(query.sql)
    if (writes && !this.#trx) await (this.#opening ?? this.#open(undefined))
    else if (this.#opening) await this.#opening
    const held = this.connection
    if (!held) {
      const connection = await acquire()
      try {
        return await connection.executeQuery(query)
      } finally {
        await release(connection)
      }
    }
    if (!writes) return held.executeQuery(query)
    await held.executeQuery(CompiledQuery.raw('savepoint triad_statement'))
    try {
      const result = await held.executeQuery(query)
      await held.executeQuery(CompiledQuery.raw('release triad_statement'))
      return result
    } catch (error) {
      await held.executeQuery(CompiledQuery.raw('rollback to triad_statement'))
      await held.executeQuery(CompiledQuery.raw('release triad_statement'))
      throw error
    }
  }

  /** Runs `work` after the commit; at once when no transaction is held (nothing to wait for). */
  async afterCommit(work: () => Promise<void>): Promise<void> {
    if (this.#trx) this.#afterCommit.push(work)
    else await work()
  }

  /** Commits what the hold holds (nothing to do when nothing was written), then runs the deferred work. */
  async commit(): Promise<void> {
    this.#ended = true
    const trx = this.#trx
    if (trx) {
      try {
        await trx.commit().execute()
      } catch (error) {
        // A failed COMMIT keeps its connection: give it back (a lost one is closed).
        await this.#release()
        throw error
      }
      this.#trx = undefined
      this.connection = undefined
    }
    const deferred = this.#afterCommit.splice(0)
    for (const work of deferred) await work()
  }

  /** Rolls back whatever the hold holds; the deferred work is dropped. Never throws. */
  async rollback(): Promise<void> {
    this.#ended = true
    this.#afterCommit = []
    await this.#release()
  }

  #open(isolation: 'read committed' | 'serializable' | undefined): Promise<ControlledTransaction<unknown>> {
    let builder = this.#db.startTransaction()
    if (this.#dialect === 'postgres') builder = builder.setIsolationLevel(isolation ?? 'read committed')
    // Kysely asks the driver for the connection synchronously within execute(): that request,
    // and no other, claims the connection the hold will hold.
    this.#claimable = true
    const opening = builder.execute()
    this.#claimable = false
    this.#opening = opening.then(
      (trx) => {
        this.#opening = undefined
        if (!this.connection) {
          void trx.rollback().execute().catch(() => {})
          throw new Error('the commit hold did not see the connection its transaction took')
        }
        ownSqliteTransaction(this.#db, trx)
        this.#trx = trx
        return trx
      },
      (error: unknown) => {
        this.#opening = undefined
        throw error
      },
    )
    return this.#opening
  }

  async #release(): Promise<void> {
    const trx = this.#trx
    this.#trx = undefined
    this.connection = undefined
    await trx?.rollback().execute().catch(() => {})
  }
}

/** A statement that writes (a write batch's chain of CTEs included); outside a transaction it commits by itself. */
const WRITE = /^\s*(insert|update|delete|merge|replace)\b|^\s*with\b[\s\S]*\b(insert|update|delete)\b/i

async function inSavepoint<DB, T>(trx: Transaction<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  await sql`savepoint triad_held`.execute(trx)
  try {
    const result = await work(trx)
    await sql`release triad_held`.execute(trx)
    return result
  } catch (error) {
    await sql`rollback to triad_held`.execute(trx)
    await sql`release triad_held`.execute(trx)
    throw error
  }
}

/** Runs `work` (and everything it starts) under `hold`. */
export function holdCommits<T>(hold: CommitHold, work: () => T): T {
  return holds.run(hold, work)
}

/** The hold the current unit of work runs under for `db`, if any. */
export function heldCommitFor(db: object): CommitHold | undefined {
  const hold = holds.getStore()
  return hold?.holds(db) && hold instanceof CommitHold ? hold : undefined
}

/**
 * Work that must not run before the current unit of work's writes are committed (an e-mail, a
 * nudge to a worker that reads them): deferred to the commit under a hold, else run now.
 */
export function afterCommit(db: object, work: () => Promise<void>): Promise<void> {
  const hold = heldCommitFor(db)
  return hold ? hold.afterCommit(work) : work()
}

