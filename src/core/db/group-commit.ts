import type { Kysely, Transaction } from 'kysely'
import { sqliteDirect } from './node-sqlite-dialect.ts'

/** Most callers sharing one SQLite transaction. */
const MAX_BATCH = 256

interface Waiter<DB> {
  work: (trx: Transaction<DB>) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** Runs one unit of work in a transaction of its own (withTransaction's retrying path). */
type RunAlone<DB> = (work: (trx: Transaction<DB>) => Promise<unknown>) => Promise<unknown>

/** Thrown out of a batch whose shared transaction can no longer be trusted (SQLite rolled it back). */
class BatchLost extends Error {}

/**
 * SQLite's group commit. SQLite has one writer and every COMMIT costs a WAL write (and holds the
 * one connection), so write transactions that arrive together — in the same turn of the event
 * loop — share one BEGIN IMMEDIATE … COMMIT. Each caller's work runs in a SAVEPOINT of its own:
 * a caller that throws rolls back only its own work and gets its own error. Every caller is
 * answered only after the shared COMMIT, so nobody sees as committed what is not.
 *
 * Should the shared transaction fail as a whole (BEGIN or COMMIT failing, or an error after which
 * SQLite rolled back everything), each caller's work runs again in a transaction of its own:
 * `withTransaction`'s work may run more than once by contract (it has no effects outside the
 * database).
 */
export function createGroupCommit<DB>(db: Kysely<DB>, open: (work: (trx: Transaction<DB>) => Promise<void>) => Promise<void>, alone: RunAlone<DB>) {
  const direct = sqliteDirect(db)
  const queue: Waiter<DB>[] = []
  let flushing = false

  const statement = (text: string) => {
    if (!direct) throw new Error('group commit needs a SQLite database made by createDb')
    direct.execute(text, [])
  }

  async function runBatch(batch: Waiter<DB>[]): Promise<void> {
    // A batch of one needs no savepoint: its failure rolls back the whole transaction, which is its own.
    if (batch.length === 1) {
      await alone(batch[0].work).then(batch[0].resolve, batch[0].reject)
      return
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
    try {
      await open(async (trx) => {
        for (const waiter of batch) {
          statement('savepoint triad_group')
          try {
            outcomes.push({ ok: true, value: await waiter.work(trx) })
            statement('release triad_group')
          } catch (error) {
            outcomes.push({ ok: false, error })
            // Some errors (a full disk, an interrupted statement) make SQLite roll back the whole
            // transaction: nothing to roll back to, and the others' work is gone too.
            if (!direct?.inTransaction) throw new BatchLost('the shared transaction was rolled back')
            statement('rollback to triad_group')
            statement('release triad_group')
          }
        }
      })
    } catch {
      // BEGIN or COMMIT failed, or the transaction was lost: each caller on its own.
      for (const waiter of batch) await alone(waiter.work).then(waiter.resolve, waiter.reject)
      return
    }
    batch.forEach((waiter, index) => {
      const outcome = outcomes[index]
      if (outcome.ok) waiter.resolve(outcome.value)
      else waiter.reject(outcome.error)
    })
  }

  async function flush(): Promise<void> {
    try {
      while (queue.length > 0) await runBatch(queue.splice(0, MAX_BATCH))
    } finally {
      flushing = false
    }
  }

  return function run<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      if (flushing) return
      flushing = true
      // Wait for the end of this turn of the event loop: the requests read in it all join.
      setImmediate(() => void flush())
    })
  }
}
