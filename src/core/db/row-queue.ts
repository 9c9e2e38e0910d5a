import { beforeDeadline, withSharedDeadline } from './deadline.ts'

/**
 * Runs the transactions that change one row one after the other inside this process, each
 * taking a pooled connection only when its turn comes. On PostgreSQL they would wait for the
 * row lock anyway, but each holding a connection while it waits: forty captures of one
 * authorization would take the whole pool, and every other route would wait for it. A caller
 * whose budget runs out while it waits gives up (a 503: nothing was applied). Other instances
 * still meet at the row lock.
 */
export function createRowQueue() {
  const tails = new Map<string, Promise<void>>()
  return async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve()
    let done = () => {}
    const mine = new Promise<void>((resolve) => (done = resolve))
    const tail = previous.then(() => mine)
    tails.set(key, tail)
    try {
      // The wait for the row and the transaction after it share one deadline.
      return await withSharedDeadline(async (deadline) => {
        await (deadline === undefined ? previous : beforeDeadline(previous, deadline, 'the row stayed busy with earlier changes until the deadline'))
        return work()
      })
    } finally {
      done()
      if (tails.get(key) === tail) tails.delete(key)
    }
  }
}
