import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import pg from 'pg'
import type { Cleanup } from './build-app.ts'
import { freePort } from './free-port.ts'

const run = promisify(execFile)
const PROGRAMS = ['initdb', 'pg_ctl', 'pg_basebackup']

/** The directory of PostgreSQL's server programs: pg_config's, else the newest of Debian's /usr/lib/postgresql/<version>/bin. */
function serverBinaries(): string | undefined {
  const fromPgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout?.trim()
  const debian = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => `/usr/lib/postgresql/${version}/bin`)
    : []
  return [fromPgConfig, ...debian].find((dir) => dir && PROGRAMS.every((program) => existsSync(join(dir, program))))
}

const asRoot = process.getuid?.() === 0
const postgresUser = asRoot ? spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }) : undefined
const binaries = serverBinaries()

/** Why a primary and standby cannot be started here (undefined when they can). */
export const standbyPairUnavailable: string | undefined = !binaries
  ? `PostgreSQL's server programs (${PROGRAMS.join(', ')}) are not installed (apt-get install postgresql)`
  : postgresUser && postgresUser.status !== 0
    ? 'running as root, and there is no postgres user to run the PostgreSQL server as'
    : undefined

/** Runs a PostgreSQL program, as the postgres user when the tests run as root (the server refuses root). */
async function postgresProgram(program: string, args: string[]): Promise<void> {
  assert.ok(binaries)
  const path = join(binaries, program)
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args]
  await run(file, argv, { timeout: 120_000 })
}

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
  const dir = mkdtempSync(join(tmpdir(), 'triad-standby-'))
  if (postgresUser) {
    const uid = Number(postgresUser.stdout.trim())
    chownSync(dir, uid, Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()))
  }
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  const primary = join(dir, 'primary')
  const standby = join(dir, 'standby')
  const pgCtl = (data: string, ...args: string[]) => postgresProgram('pg_ctl', ['-D', data, '-l', `${data}.log`, '-w', '-t', '60', ...args])
  const started: string[] = []
  t.after(async () => {
    for (const data of started.reverse()) await pgCtl(data, '-m', 'immediate', 'stop').catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })

  await postgresProgram('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C', '--no-instructions'])
  appendFileSync(
    join(primary, 'postgresql.conf'),
    [
      `port = ${primaryPort}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'shared_buffers = 16MB',
      'max_connections = 60',
      'max_wal_senders = 4',
      'fsync = off',
      '',
    ].join('\n'),
  )
  await pgCtl(primary, 'start')
  started.push(primary)
  await postgresProgram('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standby, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'])
  appendFileSync(join(standby, 'postgresql.conf'), `port = ${standbyPort}\nhot_standby = on\n`)
  await pgCtl(standby, 'start')
  started.push(standby)

  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`
  const standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/postgres`
  const pair: StandbyPair = {
    primaryUrl,
    standbyUrl,
    directories: { primary, standby },
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
    stopStandby: () => pgCtl(standby, '-m', 'fast', 'stop'),
    startStandby: () => pgCtl(standby, 'start'),
  }
  await pair.caughtUp()
  return pair
}
