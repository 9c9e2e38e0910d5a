import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely'

const STAND_IN = '\u0000value:'

export interface CompiledWithStandIns<K extends string> {
  sql: string
  /** The names of the values, in the order of the statement's parameters. */
  order: K[]
}

/**
 * Compiles the query `build` makes from stand-ins for its values, so that its SQL can be
 * cached and run again with new values. Every value must come from the stand-ins: a literal
 * would be baked into the cached SQL, so it is refused.
 */
export function compileWithStandIns<DB, K extends string>(
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
 * A query built and compiled by Kysely once per database, then run with new values: for
 * small queries run many times, whose building and compiling costs more than the database
 * takes to run them.
 */
export function compiledOnce<DB, K extends string, R>(build: (db: Kysely<DB>, values: Record<K, never>) => Compilable<R>) {
  const cache = new WeakMap<Kysely<DB>, CompiledWithStandIns<K>>()
  return (db: Kysely<DB>, values: Record<K, unknown>): Promise<QueryResult<R>> => {
    let entry = cache.get(db)
    if (!entry) {
      entry = compileWithStandIns(db, build)
      cache.set(db, entry)
    }
    const parameters = entry.order.map((name) => values[name])
    return db.executeQuery(CompiledQuery.raw(entry.sql, parameters) as CompiledQuery<R>)
  }
}
