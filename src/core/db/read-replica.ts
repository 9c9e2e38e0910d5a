import { Kysely, type LogEvent, PostgresDialect, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely'
import { setTimeout as sleep } from 'node:timers/promises'
import { within } from '../timeout.ts'
import { databaseFaultOf, isRetryableConflict } from './errors.ts'
import { createGuardedPool, TRANSACTION_START } from './pg-pool.ts'

/**
 * Reads that tolerate lag, on a streaming standby (DATABASE_READ_URL), under one rule: a read
 * routed there still sees every write acknowledged before it began, on any instance. Before the
 * read, the primary tells its WAL position (`pg_current_wal_lsn()`: the end of every commit it
 * has acknowledged); the read runs on a standby connection only once that connection has said
 * it replayed up to there, waiting `maxWaitMs` at most, and on the primary otherwise. Lag costs
 * time, never correctness. docs/scaling.md, "Reads on a standby", has the reasoning.
 */

/** Why a routed read ran where it did: a label of `triad_db_routed_reads_total`. */
type RoutedReadReason = 'caught_up' | 'waited' | 'lagging' | 'standby_unavailable' | 'standby_failed'

interface RoutedReadOutcome {
  target: 'standby' | 'primary'
  reason: RoutedReadReason
}

export type RoutedReadObserver = (outcome: RoutedReadOutcome) => void

/** Between two checks of a standby that has not replayed far enough yet. */
const POLL_MS = 5
/** Beyond the wait, the time a standby has to hand over a connection and answer; slower counts as unavailable. */
const STANDBY_ANSWER_MS = 500
/** While the standby is unavailable, one routed read tries it this often; the others go straight to the primary. */
const RETRY_MS = 1000

const PRIMARY_POSITION = 'select pg_current_wal_lsn()::text as lsn'
// A separate statement before the read: a check inside the read's own statement would run after
// its snapshot was taken, and could pass on a position the snapshot does not include.
const REPLAYED = 'select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn() >= $1::pg_lsn as caught_up'

type Route = { client: PostgresPoolClient } & RoutedReadOutcome

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Database['db']: each service narrows it to its own tables.
type AnyKysely = Kysely<any>

/** The standby's health as routed reads have seen it: after a failure, one read per RETRY_MS tries it again. */
function standbyHealth() {
  let downUntil = 0
  return {
    mayTry(): boolean {
      const now = performance.now()
      if (now < downUntil) return false
      if (downUntil > 0) downUntil = now + RETRY_MS
      return true
    },
    failed() {
      downUntil = performance.now() + RETRY_MS
    },
    answered() {
      downUntil = 0
    },
  }
}

async function queryOne<R>(client: PostgresPoolClient, text: string, values: unknown[]): Promise<R | undefined> {
  const result: PostgresQueryResult<R> = await client.query<R>(text, values)
  return result.rows[0]
}

export interface StandbyReads {
  /** Runs `work` on one connection: the standby's when it has caught up with the primary, else the primary's. */
  run<T>(work: (db: AnyKysely) => Promise<T>): Promise<T>
  observe(observer: RoutedReadObserver): void
  destroy(): Promise<void>
}

export function createStandbyReads(options: {
  /** The primary's pool (create-db.ts): for its position, and for the reads the standby cannot take. */
  primary: PostgresPool
  standby: { url: string; maxWaitMs: number }
  schema?: string
  poolSize: number
  /** As the primary's (core/db/pg-pool.ts). */
  preparedPerConnection?: number
  log?: (event: LogEvent) => void
}): StandbyReads {
  const { primary } = options
  const standby = createGuardedPool({
    connectionString: options.standby.url,
    variable: 'DATABASE_READ_URL',
    max: options.poolSize,
    schema: options.schema,
    preparedPerConnection: options.preparedPerConnection,
  })
  const health = standbyHealth()
  const observers: RoutedReadObserver[] = []
  const record = (outcome: RoutedReadOutcome) => {
    for (const observer of observers) observer(outcome)
  }

  async function primaryPosition(): Promise<string> {
    const client = await primary.connect()
    try {
      const row = await queryOne<{ lsn: string }>(client, PRIMARY_POSITION, [])
      if (!row) throw new Error('pg_current_wal_lsn() answered no row')
      return row.lsn
    } finally {
      client.release()
    }
  }

  /** A standby connection that has replayed up to `position`, or why there is none. */
  async function replayedTo(position: string, abandoned: () => boolean): Promise<Route | RoutedReadOutcome> {
    const client = await standby.pool.connect()
    const give = (reason: RoutedReadReason): RoutedReadOutcome => {
      client.release()
      return { target: 'primary', reason }
    }
    try {
      const waitUntil = performance.now() + options.standby.maxWaitMs
      for (let checks = 0; ; checks++) {
        const row = await queryOne<{ standby: boolean; caught_up: boolean | null }>(client, REPLAYED, [position])
        // A server out of recovery (promoted, or not a standby at all) has its own writes.
        if (!row?.standby) return give('standby_unavailable')
        if (row.caught_up) return { client, target: 'standby', reason: checks === 0 ? 'caught_up' : 'waited' }
        if (abandoned() || performance.now() + POLL_MS > waitUntil) return give('lagging')
        await sleep(POLL_MS)
      }
    } catch (error) {
      client.release()
      throw error
    }
  }

  async function route(): Promise<Route> {
    const onPrimary = async (reason: RoutedReadReason): Promise<Route> => ({ client: await primary.connect(), target: 'primary', reason })
    if (!health.mayTry()) return onPrimary('standby_unavailable')
    const position = await primaryPosition()
    let abandoned = false
    const attempt = replayedTo(position, () => abandoned)
    let found: Route | RoutedReadOutcome
    try {
      found = await within(attempt, options.standby.maxWaitMs + STANDBY_ANSWER_MS, 'the standby')
    } catch {
      // Refused, reset, or too slow to answer: the primary serves, and a connection that comes late goes back unused.
      abandoned = true
      attempt.then((late) => ('client' in late ? late.client.release() : undefined), () => {})
      found = { target: 'primary', reason: 'standby_unavailable' }
    }
    if (found.reason === 'standby_unavailable') health.failed()
    else health.answered()
    return 'client' in found ? found : onPrimary(found.reason)
  }

  /**
   * The connection a routed read holds. A standby that fails under the read (its connection
   * lost, or the statement cancelled by a conflict with recovery) hands the statement, and the
   * rest of the read, to the primary.
   */
  function routedClient(chosen: Route): PostgresPoolClient {
    let client: PostgresPoolClient | undefined = chosen.client
    let { target, reason } = chosen
    const routed = {
      async query(text: string, values: readonly unknown[]) {
        // A transaction on the standby could not write, and one moved to the primary midway would not be one.
        if (TRANSACTION_START.test(text)) throw new Error('a routed read runs outside transactions; open transactions on the primary (database.db)')
        if (!client) throw new Error('the routed read has lost its connection')
        if (target === 'primary') return client.query(text, values)
        try {
          return await client.query(text, values)
        } catch (error) {
          const lost = databaseFaultOf(error) === 'unavailable'
          if (!lost && !isRetryableConflict(error)) throw error
          if (lost) health.failed()
          // Released before the primary is asked: if none comes, `release()` has nothing left to give back.
          client.release()
          client = undefined
          target = 'primary'
          reason = 'standby_failed'
          client = await primary.connect()
          return client.query(text, values)
        }
      },
      release() {
        client?.release()
        client = undefined
        record({ target, reason })
      },
    }
    return routed as unknown as PostgresPoolClient
  }

  const db = new Kysely({
    dialect: new PostgresDialect({
      pool: {
        connect: async () => routedClient(await route()),
        end: () => standby.pool.end(),
      },
    }),
    log: options.log,
  })

  return {
    run: (work) => db.connection().execute(work),
    observe: (observer) => observers.push(observer),
    destroy: () => db.destroy(),
  }
}
