import type { Clock } from '../../../../core/clock.ts'
import { isUniqueViolation } from '../../../../core/db/errors.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { ModuleDatabase } from '../../db.ts'
import type { ThrottleTables } from './throttle.table.ts'
import { deleteFailures, deleteStaleFailures, findFailureForUpdate, findFailures, saveFailure } from './throttle.repository.ts'

type AuthnDatabase = ModuleDatabase<ThrottleTables>

/**
 * Brute-force throttling of password logins, kept in the database so every instance sees the
 * same counts.
 *
 * - Per account: after `perAccount` failures the account waits 1 s, then 2, 4, … capped at
 *   ACCOUNT_MAX_BACKOFF_MS. The cap is what stops an attacker from locking the real user out for
 *   long: at worst the user waits a minute, and the attacker gets one guess a minute.
 * - Per client address: a much higher bar (`perIp`), so people behind one NAT still log in,
 *   with back-off capped at IP_MAX_BACKOFF_MS.
 * - While blocked, attempts are refused (429 + Retry-After) without checking the password and
 *   without counting, so hammering does not extend the block. Failures are forgotten after
 *   FORGET_AFTER_MS without one; a successful login clears its account's count (not the address's).
 */
const ACCOUNT_MAX_BACKOFF_MS = 60_000
const IP_MAX_BACKOFF_MS = 15 * 60_000
const FORGET_AFTER_MS = 15 * 60_000
const SWEEP_EVERY_FAILURES = 100

export function createThrottleService(deps: { database: AuthnDatabase; clock: Clock; perAccount: number; perIp: number }) {
  const { database, clock } = deps
  const accountKey = (email: string) => `account:${email}`
  const ipKey = (address: string) => `ip:${address}`
  let failuresSinceSweep = 0

  async function recordOne(key: string, freeAttempts: number, maxBackoffMs: number): Promise<void> {
    const attempt = () =>
      withTransaction(database, async (trx) => {
        const now = clock.now()
        const row = await findFailureForUpdate(database, trx, key)
        const stale = row !== undefined && now.getTime() - new Date(row.last_failure_at).getTime() > FORGET_AFTER_MS
        const failures = row && !stale ? row.failures + 1 : 1
        const over = failures - freeAttempts
        const blockedUntil = over >= 0 ? new Date(now.getTime() + Math.min(1000 * 2 ** over, maxBackoffMs)).toISOString() : null
        await saveFailure(trx, { key, failures, last_failure_at: now.toISOString(), blocked_until: blockedUntil }, row !== undefined)
      })
    try {
      await attempt()
    } catch (error) {
      // Two first failures raced to insert the row: count again on top of the winner's.
      if (!isUniqueViolation(error)) throw error
      await attempt()
    }
  }

  return {
    /** Seconds to wait before the next attempt, or 0 when the attempt may go ahead. */
    async retryAfterSeconds(email: string, address: string): Promise<number> {
      const rows = await findFailures(database.db, [accountKey(email), ipKey(address)])
      const now = clock.now().getTime()
      let waitMs = 0
      for (const row of rows) {
        if (row.blocked_until) waitMs = Math.max(waitMs, new Date(row.blocked_until).getTime() - now)
      }
      return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0
    },

    async recordFailure(email: string, address: string): Promise<void> {
      await recordOne(accountKey(email), deps.perAccount, ACCOUNT_MAX_BACKOFF_MS)
      if (address) await recordOne(ipKey(address), deps.perIp, IP_MAX_BACKOFF_MS)
      // Every hundredth failure on this instance sweeps rows that no longer count, so guessing
      // from many addresses or at many names cannot grow the table without bound.
      if (++failuresSinceSweep >= SWEEP_EVERY_FAILURES) {
        failuresSinceSweep = 0
        const now = clock.now()
        await deleteStaleFailures(database.db, new Date(now.getTime() - FORGET_AFTER_MS).toISOString(), now.toISOString())
      }
    },

    async recordSuccess(email: string): Promise<void> {
      await deleteFailures(database.db, accountKey(email))
    },
  }
}

export type ThrottleService = ReturnType<typeof createThrottleService>
