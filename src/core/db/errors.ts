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

/** A conflict with a concurrent transaction that is resolved by running the transaction again. */
export function isRetryableConflict(error: unknown): boolean {
  const { code, errcode } = driverError(error)
  return code === '40001' || code === '40P01' || errcode === SQLITE_BUSY
}

/** Errors of reaching the database at all (refused, reset, unknown host, timed out connecting). */
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'])

/**
 * The database could not be reached, or dropped the connection: a fault of the network or of the
 * server (PostgreSQL starting up or shutting down: class 57P, connection exceptions: class 08),
 * not of the statement.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  const { code } = driverError(error)
  if (typeof code === 'string' && (UNREACHABLE_ERRNO.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|not queryable/.test(message)
}
