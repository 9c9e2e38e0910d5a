/** One statement the database ran: for metrics (its latency) and traces (a span for SQLite, which has no instrumentation). */
interface ObservedQuery {
  sql: string
  /** `performance.now()` when it started. */
  startedAt: number
  durationMs: number
  failed: boolean
}

export type QueryObserver = (query: ObservedQuery) => void

/** Several observers as one (none: undefined, so the database skips timing altogether). */
export function combineObservers(observers: readonly QueryObserver[]): QueryObserver | undefined {
  if (observers.length === 0) return undefined
  if (observers.length === 1) return observers[0]
  return (query) => {
    for (const observer of observers) observer(query)
  }
}
