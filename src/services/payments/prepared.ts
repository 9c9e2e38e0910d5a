import { type Compilable, CompiledQuery } from 'kysely'
import type { DialectName } from '../../core/db/create-db.ts'
import type { PaymentsDb } from './tables.ts'

const PARAMETER = '\u0000param:'

/**
 * A query whose SQL is built once per dialect, then run with new parameters. On the hot paths
 * (GET /transactions/{id}, captures) Kysely's builder and compiler cost more than SQLite's own
 * execution; the statement text is the same every time, so it is built on first use.
 *
 * `build` receives a parameter object whose properties stand for the values; every value the
 * query needs must come from it (a literal would be baked into the cached SQL — refused).
 */
export function prepared<K extends string, R>(build: (db: PaymentsDb, parameters: Record<K, never>, dialect: DialectName) => Compilable<R>) {
  const cache = new Map<DialectName, { sql: string; order: K[] }>()
  const placeholders = new Proxy({} as Record<K, never>, { get: (_target, name) => `${PARAMETER}${String(name)}` })
  return async (db: PaymentsDb, dialect: DialectName, values: Record<K, unknown>): Promise<{ rows: R[]; numAffectedRows?: bigint }> => {
    let entry = cache.get(dialect)
    if (!entry) {
      const compiled = build(db, placeholders, dialect).compile()
      const order = compiled.parameters.map((parameter) => {
        if (typeof parameter !== 'string' || !parameter.startsWith(PARAMETER)) throw new Error(`prepared query with a literal parameter: ${compiled.sql}`)
        return parameter.slice(PARAMETER.length) as K
      })
      entry = { sql: compiled.sql, order }
      cache.set(dialect, entry)
    }
    return db.executeQuery<R>(
      CompiledQuery.raw(
        entry.sql,
        entry.order.map((name) => values[name]),
      ) as CompiledQuery<R>,
    )
  }
}
