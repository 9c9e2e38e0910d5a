import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely'

const MARK = '\u0000value:'

/**
 * A query built and compiled by Kysely once per database, then run with new values. The
 * client API runs a few small queries many times per payment, and building and compiling them
 * costs more than SQLite takes to run them. `build` gets stand-ins for the values: every value
 * must come from them, so none is baked into the cached SQL (a literal is refused).
 */
export function compiledOnce<DB, K extends string, R>(build: (db: Kysely<DB>, values: Record<K, never>) => Compilable<R>) {
  const cache = new WeakMap<Kysely<DB>, { sql: string; order: K[] }>()
  const standIns = new Proxy({} as Record<K, never>, { get: (_target, name) => `${MARK}${String(name)}` })
  return (db: Kysely<DB>, values: Record<K, unknown>): Promise<QueryResult<R>> => {
    let entry = cache.get(db)
    if (!entry) {
      const compiled = build(db, standIns).compile()
      const order = compiled.parameters.map((parameter) => {
        if (typeof parameter !== 'string' || !parameter.startsWith(MARK)) throw new Error(`compiledOnce: a literal value in ${compiled.sql}`)
        return parameter.slice(MARK.length) as K
      })
      entry = { sql: compiled.sql, order }
      cache.set(db, entry)
    }
    const parameters = entry.order.map((name) => values[name])
    return db.executeQuery(CompiledQuery.raw(entry.sql, parameters) as CompiledQuery<R>)
  }
}
