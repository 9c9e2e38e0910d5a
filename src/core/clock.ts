/** Where time comes from. Services take a Clock so that expiry is tested without sleeping. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

export interface ManualClock extends Clock {
  set(at: Date | string): void
  advance(ms: number): void
}

/** A clock that moves only when told to; for tests and reproducible runs. */
export function createManualClock(start: Date | string = '2026-01-01T00:00:00.000Z'): ManualClock {
  let current = new Date(start).getTime()
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at).getTime()
    },
    advance: (ms) => {
      current += ms
    },
  }
}
