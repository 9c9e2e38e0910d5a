import { randomBytes, randomUUID } from 'node:crypto'
import type { Clock } from './clock.ts'
import { pooledRandomBytes } from './security/random-pool.ts'

export interface IdGenerator {
  /** A random RFC 4122 version 4 UUID. */
  uuid(): string
  /**
   * A 24-hex-digit id whose first 8 digits are the Unix time in seconds (MongoDB ObjectId
   * layout), so ids sort by creation time and an id built from a date is a valid cursor.
   */
  timeOrdered(): string
  /** A prefixed random id such as `ses_4f9c…`. */
  prefixed(prefix: string): string
}

let counter = randomBytes(3).readUIntBE(0, 3)
const processPart = randomBytes(5).toString('hex')

export function createIdGenerator(clock: Clock): IdGenerator {
  return {
    uuid: () => randomUUID(),
    timeOrdered: () => {
      const seconds = Math.floor(clock.now().getTime() / 1000)
      counter = (counter + 1) % 0x1000000
      return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0')
    },
    prefixed: (prefix) => `${prefix}_${pooledRandomBytes(12).toString('hex')}`,
  }
}

/** The smallest time-ordered id of a given instant, for cursors such as `before=<date>`. */
export function timeOrderedIdAt(date: Date): string {
  return (
    Math.floor(date.getTime() / 1000)
      .toString(16)
      .padStart(8, '0') + '0'.repeat(16)
  )
}
