/**
 * Where the process is in its life, shared by the core and the services: serving, draining
 * after a stop signal (readiness fails, clients are asked to close their connections, running
 * work goes on), and past the grace period (long-running work stops and tells the client to
 * retry).
 */
export interface Lifecycle {
  /** True from the stop signal on. */
  readonly draining: boolean
  /** Aborted when the grace period ends: what still runs (a streamed reply) stops then. */
  readonly deadline: AbortSignal
  startDraining(): void
  endGrace(): void
}

export function createLifecycle(): Lifecycle {
  const deadline = new AbortController()
  const lifecycle = {
    draining: false,
    deadline: deadline.signal,
    startDraining() {
      lifecycle.draining = true
    },
    endGrace() {
      lifecycle.draining = true
      if (!deadline.signal.aborted) deadline.abort(new Error('the server is shutting down'))
    },
  }
  return lifecycle
}
