import { AsyncLocalStorage } from 'node:async_hooks'
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely'

/**
 * What the driver (core/db/held-connections.ts) and prepared statements (core/db/prepared.ts)
 * need of a commit hold (core/db/held-commit.ts): apart, so that none of them imports another.
 */
export interface HeldUnit {
  holds(db: object): boolean
  /** The driver of the hold's database: only its statements are routed by the hold. */
  readonly driverToken: object | undefined
  readonly ended: boolean
  /**
   * True once, for the connection the hold's transaction acquires as it opens (asked
   * synchronously when a connection is wanted); every other statement is routed by `statement`.
   */
  claimOpening(): boolean
  /** The connection the hold's transaction holds, once open. */
  connection: DatabaseConnection | undefined
  statement(query: CompiledQuery, acquire: () => Promise<DatabaseConnection>, release: (connection: DatabaseConnection) => Promise<void>): Promise<QueryResult<unknown>>
}

/** The commit hold the current unit of work runs under. */
export const holds = new AsyncLocalStorage<HeldUnit>()

/** The driver token of each database made with held connections (a root Kysely instance → its driver's token). */
export const driverTokens = new WeakMap<object, object>()

/** Whether the current unit of work runs under a commit hold on `db`. */
export function underHold(db: object): boolean {
  return holds.getStore()?.holds(db) ?? false
}
