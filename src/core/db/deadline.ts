import { within } from '../timeout.ts'
import { AsyncLocalStorage } from 'node:async_hooks'
import { DatabaseUnavailableError } from './errors.ts'

/**
 * How much database time an HTTP request may spend: waiting for connections, waiting for a busy
 * row (`withSharedDeadline`) and running statements, summed over its uses of the database. With
 * COMMIT_GRACE_MS and the answer's own time, a request the database holds up is answered within
 * 5 s (docs/decisions.md, "Database faults at runtime"). What a request does between its uses (a
 * model's reply, a synthesis) does not spend it.
 */
export const REQUEST_DATABASE_BUDGET_MS = 3000

/**
 * A COMMIT sent before the deadline gets at least this long to answer: cutting it short would
 * leave its outcome unknown, where waiting a little more usually tells.
 */
export const COMMIT_GRACE_MS = 1500

interface Scope {
  /** The request's database time so far, shared by every scope of the request. */
  request: { spentMs: number }
  /** Inside `withSharedDeadline`: the one deadline of everything it runs. */
  deadline?: number
}

const scopes = new AsyncLocalStorage<Scope>()

/**
 * Runs `work` (and everything it starts) as an HTTP request's: its database time is bounded.
 * Work outside requests (migrations, commands, workers) is not.
 */
export function withRequestDatabaseBudget<T>(work: () => T): T {
  return scopes.run({ request: { spentMs: 0 } }, work)
}

/** One use of the database (a checkout of a connection): the instant it must be done by, if any, and its end. */
export interface DatabaseUse {
  deadline: number | undefined
  end(): void
}

/** Starts a use of the database: its deadline is what is left of the request's budget (none outside a request). */
export function startDatabaseUse(): DatabaseUse {
  const scope = scopes.getStore()
  if (!scope) return { deadline: undefined, end() {} }
  if (scope.deadline !== undefined) return { deadline: scope.deadline, end() {} }
  const started = performance.now()
  return {
    deadline: started + Math.max(0, REQUEST_DATABASE_BUDGET_MS - scope.request.spentMs),
    end: () => {
      scope.request.spentMs += performance.now() - started
    },
  }
}

/** Runs `work` with all its database uses sharing one deadline (waiting for a row, then the transaction), counted once. */
export async function withSharedDeadline<T>(work: (deadline: number | undefined) => Promise<T>): Promise<T> {
  const scope = scopes.getStore()
  if (!scope || scope.deadline !== undefined) return work(scope?.deadline)
  const use = startDatabaseUse()
  try {
    return await scopes.run({ request: scope.request, deadline: use.deadline }, () => work(use.deadline))
  } finally {
    use.end()
  }
}

/** `work`, or a DatabaseUnavailableError saying `what` once `deadline` (a `performance.now()` instant) has passed. */
export function beforeDeadline<T>(work: Promise<T>, deadline: number, what: string): Promise<T> {
  return within(work, Math.max(0, deadline - performance.now()), what, () => new DatabaseUnavailableError(what))
}
