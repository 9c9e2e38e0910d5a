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
