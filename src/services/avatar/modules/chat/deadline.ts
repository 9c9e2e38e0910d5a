class DeadlineError extends Error {
  constructor(ms: number) {
    super(`the language model did not answer within ${ms} ms`)
    this.name = 'DeadlineError'
  }
}

/**
 * A signal that fires when `outer` does (the client went away) or when `timeoutMs` pass
 * without a `touch()`. `touch()` restarts the wait: while streaming, the limit applies to the
 * first piece and then to each gap between pieces, so a long reply that keeps coming is never
 * cut off. `clear()` releases the timer and the link to `outer`.
 */
export function createDeadline(outer: AbortSignal | undefined, timeoutMs: number) {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const touch = () => {
    clearTimeout(timer)
    timer = setTimeout(() => controller.abort(new DeadlineError(timeoutMs)), timeoutMs)
  }
  touch()
  // Linked by hand: AbortSignal.any keeps bookkeeping per composite signal, which adds up
  // over a thousand open streams.
  const forward = () => controller.abort(outer?.reason)
  if (outer?.aborted) forward()
  else outer?.addEventListener('abort', forward, { once: true })
  return {
    signal: controller.signal,
    touch,
    clear: () => {
      clearTimeout(timer)
      outer?.removeEventListener('abort', forward)
    },
  }
}
