import { within } from '../timeout.ts'
import { AsyncLocalStorage } from 'node:async_hooks'
import { DatabaseUnavailableError } from './errors.ts'

/**
 * How long the database work of one HTTP request may take, from the request's arrival: waiting
 * for a connection included. With COMMIT_GRACE_MS and the answer's own time, every request the
 * database holds up is answered within 5 s (docs/decisions.md, "Database faults at runtime").
 */
export const REQUEST_DATABASE_BUDGET_MS = 3000

/**
 * A COMMIT sent before the deadline gets at least this long to answer: cutting it short would
 * leave its outcome unknown, where waiting a little more usually tells.
 */
export const COMMIT_GRACE_MS = 1500

const deadlines = new AsyncLocalStorage<() => number | undefined>()

/**
 * Runs `work` (and everything it starts) with its database operations bounded by `deadlineOf()`,
 * a `performance.now()` instant, or unbounded while it answers undefined.
 */
export function withDatabaseDeadline<T>(deadlineOf: () => number | undefined, work: () => T): T {
  return deadlines.run(deadlineOf, work)
}

/** The instant by which the current database operation must be done, if it has one. */
export function currentDatabaseDeadline(): number | undefined {
  return deadlines.getStore()?.()
}

/** `work`, or a DatabaseUnavailableError saying `what` once `deadline` (a `performance.now()` instant) has passed. */
export function beforeDeadline<T>(work: Promise<T>, deadline: number, what: string): Promise<T> {
  return within(work, Math.max(0, deadline - performance.now()), what, () => new DatabaseUnavailableError(what))
}
