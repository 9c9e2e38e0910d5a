/**
 * `work`, or a rejection once `ms` have passed (the work itself goes on): an error naming `what`,
 * or the one `timedOut` makes.
 */
export async function within<T>(work: Promise<T>, ms: number, what: string, timedOut?: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      work,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(timedOut?.() ?? new Error(`${what} did not answer within ${ms} ms`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}
