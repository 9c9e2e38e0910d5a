import { CompiledQuery, type Transaction } from 'kysely'
import type { DialectName } from './create-db.ts'

/**
 * The writes of one database transaction whose results nobody reads, sent together. On
 * PostgreSQL they wait in the batch and `flush` sends them as one statement, a chain of
 * data-modifying CTEs: one round trip instead of one each, while the transaction holds its row
 * locks. On SQLite (no round trips) each runs at once on the transaction's connection.
 *
 * The statements of a batch must not depend on each other's effects: PostgreSQL runs every part
 * of one statement against the same snapshot (a row inserted by one part is invisible to a
 * SELECT in another; foreign keys between them hold, checked at the end of the statement).
 * Reads go to `trx` before the writes that depend on them.
 */
export class WriteBatch<DB> {
  readonly trx: Transaction<DB>
  readonly dialect: DialectName
  readonly #pending: Array<{ sql: string; parameters: readonly unknown[] }> = []

  constructor(trx: Transaction<DB>, dialect: DialectName) {
    this.trx = trx
    this.dialect = dialect
  }

  /** Queues a write (PostgreSQL); runs `now` at once on SQLite. */
  async add(sql: string, parameters: readonly unknown[], now: () => Promise<unknown>): Promise<void> {
    if (this.dialect !== 'postgres') {
      await now()
      return
    }
    this.#pending.push({ sql, parameters })
  }

  /** Sends the queued writes as one statement; a failing part fails the whole statement. */
  async flush(): Promise<void> {
    const writes = this.#pending.splice(0)
    if (writes.length === 0) return
    if (writes.length === 1) {
      await this.trx.executeQuery(CompiledQuery.raw(writes[0].sql, [...writes[0].parameters]))
      return
    }
    const parameters: unknown[] = []
    const parts = writes.map((write) => {
      const offset = parameters.length
      parameters.push(...write.parameters)
      // The statements were compiled from stand-ins (core/db/prepared.ts): no literal in them
      // holds `$n`, so every `$n` is a placeholder.
      return offset === 0 ? write.sql : write.sql.replace(/\$(\d+)/g, (_match, index: string) => `$${Number(index) + offset}`)
    })
    const last = parts.pop() ?? ''
    const sql = `with ${parts.map((part, index) => `w${index} as (${part})`).join(', ')} ${last}`
    await this.trx.executeQuery(CompiledQuery.raw(sql, parameters))
  }
}

/** A batch for the writes of `trx`; flush it before the transaction ends. */
export function writeBatch<DB>(trx: Transaction<DB>, dialect: DialectName): WriteBatch<DB> {
  return new WriteBatch(trx, dialect)
}
