import type { PostgresPool, PostgresPoolClient } from 'kysely'
import pg from 'pg'
import { beforeDeadline, COMMIT_GRACE_MS, type DatabaseUse, startDatabaseUse } from './deadline.ts'
import { CommitOutcomeUnknownError, DatabaseUnavailableError, databaseFaultOf, isStalePlan } from './errors.ts'
import { connectionStatements, DEFAULT_MAX_PER_CONNECTION, type ParsedStatementsOwner } from './named-statements.ts'
import { selectHosts } from './pg-hosts.ts'
import { parsePostgresUrl } from './postgres-url.ts'

/** The longest anything waits for a connection: a free one from the pool, or a new one opened. */
const ACQUIRE_TIMEOUT_MS = 2000

/**
 * Session settings of every connection. PostgreSQL only notices a vanished client when it next
 * writes to it; these make it notice (and roll back, releasing the row locks) while a statement
 * still waits on a lock, or while a transaction sits idle because its client is gone.
 */
const SESSION_SETTINGS = ['-c client_connection_check_interval=1000', '-c idle_in_transaction_session_timeout=15000']

/** A SQLSTATE (five characters): the server answered, so the connection is still usable. */
const SQLSTATE = /^[0-9A-Z]{5}$/
/**
 * Server errors that end the session (shutdown, crash, connection failure), and 25006: a write
 * on a host that no longer takes writes (a primary demoted by a failover) — its connections are
 * dropped so that new ones find the new primary.
 */
const SESSION_ENDING = /^(08|57P0|25006)/

function connectionLost(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && SQLSTATE.test(code)) return SESSION_ENDING.test(code)
  return databaseFaultOf(error) === 'unavailable'
}

const COMMIT = /^\s*commit\b/i
/** A statement that opens a transaction (`begin`, `start transaction`). */
export const TRANSACTION_START = /^\s*(begin|start)\b/i
const TRANSACTION_END = /^\s*(commit|rollback)\b/i
/** A statement that writes; outside a transaction it commits by itself. */
const WRITE = /^\s*(insert|update|delete|merge)\b/i

type ConnectionStatements = ReturnType<typeof connectionStatements>

/**
 * One checked-out client, as Kysely uses it. A statement still running at the deadline of this
 * use of the database (core/db/deadline.ts) is abandoned, and so is the connection: released
 * with an error, pg closes it and PostgreSQL rolls back whatever transaction it had open. After a connection is
 * lost every further statement (Kysely's ROLLBACK) fails with the same error, so a COMMIT whose
 * outcome is unknown is reported as such, not as the failed ROLLBACK after it. So is a write
 * outside a transaction: it commits by itself, and may be on the primary (waiting for a standby
 * to confirm it) when its answer is lost.
 *
 * With `statements`, a statement worth it goes as a named prepared statement of the connection
 * (core/db/named-statements.ts). One whose plan PostgreSQL refuses because a table changed
 * shape is parsed again and, outside a transaction, sent again; inside one the error ends the
 * transaction, and withTransaction runs it again (core/db/errors.ts, isRetryableConflict).
 */
function guardedClient(client: pg.PoolClient, use: DatabaseUse, statements: ConnectionStatements | undefined): PostgresPoolClient {
  let lost: Error | undefined
  let inTransaction = false
  /** Statements sent and not yet answered: a name may be closed only when there are none. */
  let inFlight = 0
  const send = (text: string, values: unknown[]) => {
    const name = statements?.nameFor(text, inFlight === 0)
    return { name, running: name === undefined ? client.query(text, values) : client.query({ name, text, values }) }
  }
  // Kysely also passes cursors (streamed queries); Triad configures none, so only text comes here.
  const guarded = {
    async query(text: string, values: readonly unknown[]) {
      if (lost) throw lost
      const commit = COMMIT.test(text) || (!inTransaction && WRITE.test(text))
      if (TRANSACTION_START.test(text)) inTransaction = true
      else if (TRANSACTION_END.test(text)) inTransaction = false
      let deadline = use.deadline
      if (deadline !== undefined && commit) deadline = Math.max(deadline, performance.now() + COMMIT_GRACE_MS)
      const answer = (running: Promise<pg.QueryResult>) =>
        deadline === undefined ? running : beforeDeadline(running, deadline, 'the database did not answer in time')
      let sent = send(text, [...values])
      inFlight++
      try {
        try {
          return await answer(sent.running)
        } catch (error) {
          if (sent.name === undefined || !isStalePlan(error)) throw error
          statements?.forget(sent.name)
          if (inTransaction) throw error
          sent = send(text, [...values])
          return await answer(sent.running)
        }
      } catch (error) {
        if (!connectionLost(error)) throw error
        sent.running.catch(() => {})
        lost = commit ? new CommitOutcomeUnknownError({ cause: error }) : (error as Error)
        throw lost
      } finally {
        inFlight--
      }
    },
    release() {
      use.end()
      client.release(lost)
    },
  }
  return guarded as unknown as PostgresPoolClient
}

export interface GuardedPool {
  /** The pool Kysely's PostgresDialect uses. */
  pool: PostgresPool
  /** Runs `select 1` over a connection of its own, so that a busy pool does not look like a dead database. */
  ping(): Promise<void>
  stats(): { total: number; idle: number; waiting: number }
}

export interface GuardedPoolConfig {
  connectionString: string
  /** The environment variable the string came from, for messages (DATABASE_URL when not given). */
  variable?: string
  max: number
  schema?: string
  requireSynchronousStandby?: boolean
  /**
   * Named prepared statements per connection at most (core/db/named-statements.ts); 0 sends
   * every statement unnamed, as a transaction-mode pooler needs (DATABASE_PREPARED_STATEMENTS=off).
   */
  preparedPerConnection?: number
}

export function createGuardedPool(config: GuardedPoolConfig): GuardedPool {
  const options = [...SESSION_SETTINGS, ...(config.schema ? [`-c search_path=${config.schema}`] : [])].join(' ')
  const hosts = selectHosts(parsePostgresUrl(config.connectionString, config.variable), config.requireSynchronousStandby)
  const base = { Client: hosts.Client, options, connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS, keepAlive: true }
  const pool = new pg.Pool({ ...base, max: config.max })
  // A probe that hangs (a server that stopped answering) is given up on, and its connection closed.
  const probe = new pg.Pool({ ...base, max: 1, query_timeout: ACQUIRE_TIMEOUT_MS })
  // An idle client's error reaches its pool, which drops the client; every client also
  // listens itself (core/db/pg-hosts.ts), so no 'error' goes unheard.
  const ignore = () => {}
  for (const each of [pool, probe]) each.on('error', ignore)
  const preparedPerConnection = config.preparedPerConnection ?? DEFAULT_MAX_PER_CONNECTION
  // A pool hands out the same client again and again: its names live as long as it does.
  const statementsOf = new WeakMap<pg.PoolClient, ConnectionStatements>()
  const statementsFor = (client: pg.PoolClient): ConnectionStatements | undefined => {
    if (preparedPerConnection === 0) return undefined
    let statements = statementsOf.get(client)
    if (!statements) {
      statements = connectionStatements(client as unknown as ParsedStatementsOwner, preparedPerConnection)
      statementsOf.set(client, statements)
    }
    return statements
  }
  /** A connection from `from`; with several hosts, one that fails is retried on the next host. */
  const acquire = async (from: pg.Pool, deadline: number | undefined): Promise<pg.PoolClient> => {
    for (let attempt = 1; ; attempt++) {
      const acquiring = from.connect()
      try {
        return deadline === undefined ? await acquiring : await beforeDeadline(acquiring, deadline, 'no database connection came free in time')
      } catch (error) {
        // Given up on: a connection that comes later goes back to the pool unused.
        acquiring.then((client) => client.release(), ignore)
        if (attempt >= hosts.hostCount || databaseFaultOf(error) !== 'unavailable') throw error
        if (deadline !== undefined && deadline <= performance.now()) throw error
      }
    }
  }
  return {
    pool: {
      async connect() {
        // One use of the database (a statement, or a transaction) runs to this deadline.
        const use = startDatabaseUse()
        const { deadline } = use
        if (deadline !== undefined && deadline <= performance.now()) throw new DatabaseUnavailableError('no time was left to wait for a database connection')
        try {
          const client = await acquire(pool, deadline)
          return guardedClient(client, use, statementsFor(client))
        } catch (error) {
          use.end()
          throw error
        }
      },
      async end() {
        await Promise.all([pool.end(), probe.end()])
      },
    },
    async ping() {
      const client = await acquire(probe, performance.now() + ACQUIRE_TIMEOUT_MS)
      let failure: Error | undefined
      try {
        await client.query('select 1')
      } catch (error) {
        failure = error as Error
        throw error
      } finally {
        client.release(failure)
      }
    },
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  }
}
