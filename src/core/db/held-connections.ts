import type { CompiledQuery, DatabaseConnection, Dialect, Driver, Kysely, QueryResult } from 'kysely'
import { driverTokens, holds } from './held-commit-scope.ts'

/** Connections lent to a hold's own statements: releasing one gives nothing back. */
const borrowed = new WeakSet<DatabaseConnection>()

/**
 * The dialect with its driver taught about holds: under a hold on the database made with it,
 * a write on the root database joins the hold's transaction, and once that is open every
 * statement runs on its connection. `register` the Kysely instance made with it.
 */
export function withHeldConnections(dialect: Dialect): { dialect: Dialect; register(db: Kysely<unknown>): void } {
  const token = {}
  return {
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createDriver: () => heldConnectionsDriver(dialect.createDriver(), token),
    },
    register: (db) => driverTokens.set(db, token),
  }
}

function heldConnectionsDriver(driver: Driver, token: object): Driver {
  return {
    init: () => driver.init(),
    async acquireConnection() {
      const found = holds.getStore()
      const hold = found?.driverToken === token && !found.ended ? found : undefined
      if (!hold || hold.claimOpening()) {
        const connection = await driver.acquireConnection()
        if (hold) hold.connection = connection
        return connection
      }
      // Under a hold, the connection is chosen statement by statement (CommitHold.statement).
      const acquire = () => driver.acquireConnection()
      const release = (connection: DatabaseConnection) => driver.releaseConnection(connection)
      const lent: DatabaseConnection = {
        executeQuery: <R>(query: CompiledQuery) => hold.statement(query, acquire, release) as Promise<QueryResult<R>>,
        streamQuery: () => {
          throw new Error('streamed queries are not supported under a commit hold')
        },
      }
      borrowed.add(lent)
      return lent
    },
    beginTransaction: (connection, settings) => {
      if (borrowed.has(connection)) throw new Error('a transaction under a commit hold is opened by withTransaction (core/db/transaction.ts)')
      return driver.beginTransaction(connection, settings)
    },
    commitTransaction: (connection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
    savepoint: driver.savepoint?.bind(driver),
    rollbackToSavepoint: driver.rollbackToSavepoint?.bind(driver),
    releaseSavepoint: driver.releaseSavepoint?.bind(driver),
    async releaseConnection(connection) {
      if (borrowed.has(connection)) return
      await driver.releaseConnection(connection)
    },
    destroy: () => driver.destroy(),
  }
}
