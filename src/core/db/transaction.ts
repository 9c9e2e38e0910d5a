import { setTimeout as sleep } from 'node:timers/promises'
import type { Kysely, Transaction } from 'kysely'
import type { Database } from './create-db.ts'
import { createGroupCommit } from './group-commit.ts'
import { heldCommitFor } from './held-commit.ts'
import { sqliteDirect } from './node-sqlite-dialect.ts'
import { ownSqliteTransaction } from './prepared.ts'
import { isRetryableConflict } from './errors.ts'

export interface TransactionOptions {
  /**
   * PostgreSQL isolation. `read committed` (the default) suits code that locks the rows it
   * changes (`lockForUpdate`); `serializable` suits code that reads a set and writes on its
   * basis. SQLite always serialises writers (BEGIN IMMEDIATE), so it ignores this.
   */
  isolation?: 'read committed' | 'serializable'
  /** Attempts in all when PostgreSQL reports a serialisation failure or deadlock. */
  maxAttempts?: number
}

/**
 * Runs `work` inside one database transaction and commits it, or rolls it back on error.
 * `work` may run more than once (after a serialisation failure, or when a shared SQLite
 * transaction failed as a whole), so it must have no effects outside the database: call
 * providers before or after, never inside.
 *
 * On SQLite, transactions that arrive together share one commit (core/db/group-commit.ts): each
 * runs in a savepoint of its own, and resolves only after the shared COMMIT. On PostgreSQL each
 * is a transaction of its own, side by side over the pool.
 *
 * Under a commit hold (core/db/held-commit.ts) the first call opens the hold's transaction and
 * answers without committing; later calls run inside it.
 */
export async function withTransaction<DB, T>(
  database: Pick<Database, 'dialect'> & { db: Kysely<DB> },
  work: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const hold = heldCommitFor(database.db)
  if (hold) return hold.run(work, options)
  if (database.dialect === 'sqlite' && sqliteDirect(database.db)) return groupCommitOf(database.db)(work)
  return transactionAlone(database, work, options)
}

const groupCommits = new WeakMap<object, ReturnType<typeof createGroupCommit>>()

function groupCommitOf<DB>(db: Kysely<DB>): <T>(work: (trx: Transaction<DB>) => Promise<T>) => Promise<T> {
  let group = groupCommits.get(db)
  if (!group) {
    const database = { db, dialect: 'sqlite' as const }
    group = createGroupCommit(
      db,
      (work) => openTransaction(database, work, {}),
      (work) => transactionAlone(database, work, {}),
    ) as ReturnType<typeof createGroupCommit>
    groupCommits.set(db, group)
  }
  return group as <T>(work: (trx: Transaction<DB>) => Promise<T>) => Promise<T>
}

function openTransaction<DB, T>(
  database: Pick<Database, 'dialect'> & { db: Kysely<DB> },
  work: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  let builder = database.db.transaction()
  if (database.dialect === 'postgres') builder = builder.setIsolationLevel(options.isolation ?? 'read committed')
  return builder.execute((trx) => {
    // On SQLite the transaction holds the one connection: prepared statements run in it go
    // straight to that connection (core/db/prepared.ts).
    ownSqliteTransaction(database.db, trx)
    return work(trx)
  })
}

/** One transaction for `work` alone, run again after a retryable conflict. */
async function transactionAlone<DB, T>(
  database: Pick<Database, 'dialect'> & { db: Kysely<DB> },
  work: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 8
  for (let attempt = 1; ; attempt++) {
    try {
      return await openTransaction(database, work, options)
    } catch (error) {
      if (attempt >= maxAttempts || !isRetryableConflict(error)) throw error
      // Jittered exponential back-off so that retrying transactions do not collide again.
      await sleep(Math.random() * 5 * 2 ** attempt)
    }
  }
}

/**
 * Takes a row lock on PostgreSQL (SELECT … FOR UPDATE) so that concurrent transactions
 * changing the same row run one after the other. SQLite needs none: one writer at a time.
 */
export function lockForUpdate<Q extends { forUpdate(): Q }>(dialect: Database['dialect'], query: Q): Q {
  return dialect === 'postgres' ? query.forUpdate() : query
}
