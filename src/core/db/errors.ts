// Driver errors differ between node:sqlite (extended result codes in `errcode`) and pg
// (SQLSTATE in `code`); services ask these questions instead of reading either.

interface DriverError {
  code?: unknown
  errcode?: unknown
}

const SQLITE_CONSTRAINT_PRIMARYKEY = 1555
const SQLITE_CONSTRAINT_UNIQUE = 2067
const SQLITE_CONSTRAINT_FOREIGNKEY = 787
const SQLITE_BUSY = 5

function driverError(error: unknown): DriverError {
  return typeof error === 'object' && error !== null ? (error as DriverError) : {}
}

export function isUniqueViolation(error: unknown): boolean {
  const { code, errcode } = driverError(error)
  return code === '23505' || errcode === SQLITE_CONSTRAINT_UNIQUE || errcode === SQLITE_CONSTRAINT_PRIMARYKEY
}

export function isForeignKeyViolation(error: unknown): boolean {
  const { code, errcode } = driverError(error)
  return code === '23503' || errcode === SQLITE_CONSTRAINT_FOREIGNKEY
}

/**
 * A conflict resolved by running the transaction again: with a concurrent transaction, or with a
 * concurrent change of a table's shape that a prepared statement's plan no longer fits.
 */
export function isRetryableConflict(error: unknown): boolean {
  const { code, errcode } = driverError(error)
  return code === '40001' || code === '40P01' || errcode === SQLITE_BUSY || isStalePlan(error)
}

/**
 * PostgreSQL's refusal to run a named prepared statement whose result columns changed since it
 * was prepared (ALTER TABLE on a table a `select *` reads). Parsing the text again fixes it
 * (core/db/pg-pool.ts does, for the connection it happened on).
 */
export function isStalePlan(error: unknown): boolean {
  const { code } = driverError(error)
  const message = (error as { message?: unknown } | null)?.message
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type')
}

/**
 * Thrown by Triad itself when the database did not serve a request in time: no connection
 * came free, or a statement was still running when the request's time was up. Nothing was
 * applied (the connection is dropped, so PostgreSQL rolls its transaction back).
 */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'DatabaseUnavailableError'
  }
}

/**
 * The connection was lost (or timed out) after COMMIT was sent: PostgreSQL may have applied the
 * transaction or not, and nobody can tell from here.
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(options: { cause?: unknown }) {
    super('the connection was lost while the database was committing', options)
    this.name = 'CommitOutcomeUnknownError'
  }
}

/** What a database failure means for the request that met it. */
export type DatabaseFault = 'unavailable' | 'full' | 'outcome_unknown'

/** Socket errors of pg's connection (Node's `code`). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'EAI_AGAIN', 'ENOTFOUND'])

/**
 * SQLSTATEs that say the database cannot serve now, not that the request is wrong: class 08
 * (connection exception), 53 (insufficient resources, but a full disk: 53100), 57P01–57P05
 * (shutting down, restarting, idle session), 57014 (statement or lock wait cancelled by a
 * timeout), 55P03 (lock_timeout), 25P03 (idle_in_transaction_session_timeout), 25006 (a write
 * on a host that is read-only: a standby, or a primary demoted by a failover).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|53[0-9A-Z]{3}|57P0[1-5]|57014|55P03|25P03|25006)$/

/** pg and pg-pool report a lost or refused connection with these messages and no code. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Query read timeout|Cannot use a pool after calling end)/

const SQLITE_FULL = 13
const SQLITE_IOERR = 10
const SQLITE_CANTOPEN = 14
const SQLITE_LOCKED = 6

/**
 * Whether `error` (or what it wraps) is the database failing rather than the request or the
 * code: `unavailable` (unreachable, reset, too slow, shutting down, locked), `full` (no space
 * left to write), `outcome_unknown` (lost during COMMIT). Undefined for anything else.
 */
export function databaseFaultOf(error: unknown): DatabaseFault | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof CommitOutcomeUnknownError) return 'outcome_unknown'
    if (current instanceof DatabaseUnavailableError) return 'unavailable'
    const { code, errcode } = driverError(current)
    if (code === '53100') return 'full'
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return 'unavailable'
    if (typeof errcode === 'number') {
      // The primary result code is the low byte of an extended one (SQLITE_IOERR_WRITE is 778).
      const primary = errcode & 0xff
      if (primary === SQLITE_FULL) return 'full'
      if (primary === SQLITE_IOERR || primary === SQLITE_CANTOPEN || primary === SQLITE_BUSY || primary === SQLITE_LOCKED) return 'unavailable'
    }
    const message = (current as { message?: unknown }).message
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return 'unavailable'
  }
  return undefined
}
