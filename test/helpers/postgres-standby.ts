import assert from 'node:assert/strict'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { Cleanup } from './build-app.ts'
import { postgresProgram, postgresWorkspace, privatePostgresUnavailable } from './private-postgres.ts'

/** Why a primary and standby cannot be started here (undefined when they can). */
export const standbyPairUnavailable: string | undefined = privatePostgresUnavailable

export interface StandbyPair {
  /** The primary, as its superuser: `postgres://postgres@127.0.0.1:<port>/postgres`. */
  primaryUrl: string
  /** The hot standby streaming from it. */
  standbyUrl: string
  /** The data directories (each has `postmaster.pid`). */
  directories: { primary: string; standby: string }
  /** Runs one statement on the standby as the superuser, and answers its rows. */
  onStandby<R>(text: string): Promise<R[]>
  /** Waits (10 s at most) until the standby has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>
  stopStandby(): Promise<void>
  startStandby(): Promise<void>
}

async function query<R>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows as R[]
  } finally {
    await client.end()
  }
}

/**
 * A PostgreSQL primary and a hot standby streaming from it (`pg_basebackup -R`), each on a free
 * port of 127.0.0.1 with a data directory in a temporary directory, small and unsynced (test
 * data only); both stopped and removed when the test ends. A few seconds to start.
 */
export async function startStandbyPair(t: Cleanup): Promise<StandbyPair> {
  const workspace = postgresWorkspace(t, 'triad-standby-')
  const primaryServer = await workspace.createServer('primary')
  const standby = join(workspace.dir, 'standby')
  await postgresProgram('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryServer.port), '-U', 'postgres', '-D', standby, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'])
  const standbyServer = await workspace.startServer(standby, ['hot_standby = on'])
  const primaryUrl = primaryServer.url
  const standbyUrl = standbyServer.url
  const pair: StandbyPair = {
    primaryUrl,
    standbyUrl,
    directories: { primary: primaryServer.dataDirectory, standby },
    onStandby: (text) => query(standbyUrl, text),
    async caughtUp() {
      const [{ lsn }] = await query<{ lsn: string }>(primaryUrl, 'select pg_current_wal_lsn()::text as lsn')
      for (let tries = 0; tries < 200; tries++) {
        const [row] = await query<{ replayed: boolean }>(standbyUrl, `select pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn as replayed`).catch(() => [])
        if (row?.replayed) return
        await sleep(50)
      }
      assert.fail(`the standby did not replay up to ${lsn} within 10 s`)
    },
    stopStandby: () => standbyServer.stop('fast'),
    startStandby: () => standbyServer.start(),
  }
  await pair.caughtUp()
  return pair
}
