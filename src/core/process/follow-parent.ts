/**
 * Stops this process (a SIGTERM to itself, so the graceful shutdown runs) when the process
 * that started it goes away. `npm start` runs the server under npm, and npm passes SIGTERM and
 * SIGINT on but dies of SIGHUP (a closed terminal, a process manager's reload) without a word
 * to its child, which would go on serving, orphaned, on its port. A reparented process has a
 * new parent id; polling it is the portable way to notice (Linux's PR_SET_PDEATHSIG is not
 * reachable from Node).
 */
export function followParent(intervalMs = 500): void {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    process.kill(process.pid, 'SIGTERM')
  }, intervalMs)
  timer.unref()
}

/** True when a process manager of our own (npm, the Node 24 launcher) started this one. */
export function startedByWrapper(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event !== undefined || env.TRIAD_LAUNCHER === '1'
}
