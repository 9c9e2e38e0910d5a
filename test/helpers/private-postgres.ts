import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Cleanup } from './build-app.ts'
import { freePort } from './free-port.ts'

// PostgreSQL servers of a test's own: initdb into a temporary directory, a free port of
// 127.0.0.1, trust authentication, small and unsynced (test data only), stopped and removed when
// the test ends. As root, every program runs as the postgres user (the server refuses root).

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
const postgresAccount = asRoot ? spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }) : undefined
const binaries = serverBinaries()

/** Why a private PostgreSQL server cannot be started here (undefined when it can). */
export const privatePostgresUnavailable: string | undefined = !binaries
  ? `PostgreSQL's server programs (${PROGRAMS.join(', ')}) are not installed (apt-get install postgresql)`
  : postgresAccount && postgresAccount.status !== 0
    ? 'running as root, and there is no postgres user to run the PostgreSQL server as'
    : undefined

/** Runs a PostgreSQL program, as the postgres user when the tests run as root. */
export async function postgresProgram(program: string, args: string[]): Promise<void> {
  assert.ok(binaries)
  const path = join(binaries, program)
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args]
  await run(file, argv, { timeout: 120_000 })
}

/** Makes a file or directory the postgres user's when the tests run as root (the server reads and writes it). */
export function ownedByPostgres(path: string): string {
  if (postgresAccount) {
    const group = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    chownSync(path, Number(postgresAccount.stdout.trim()), group)
  }
  return path
}

export interface PostgresServer {
  port: number
  dataDirectory: string
  /** The superuser on 127.0.0.1: `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string
  start(): Promise<void>
  stop(mode?: 'fast' | 'immediate'): Promise<void>
}

export interface PostgresWorkspace {
  /** The temporary directory (the postgres user's): data directories, logs, sockets, and whatever the test adds. */
  dir: string
  /**
   * initdb of a new data directory `name`, then started. `settings` are added to postgresql.conf;
   * `hba`, when given, replaces pg_hba.conf.
   */
  createServer(name: string, options?: { settings?: string[]; hba?: string[] }): Promise<PostgresServer>
  /** A server for a data directory made by other means (pg_basebackup), on a free port, then started. */
  startServer(dataDirectory: string, settings?: string[]): Promise<PostgresServer>
}

/** A temporary directory for private servers; every server started in it is stopped, and the directory removed, when the test ends. */
export function postgresWorkspace(t: Cleanup, prefix = 'triad-postgres-'): PostgresWorkspace {
  const dir = ownedByPostgres(mkdtempSync(join(tmpdir(), prefix)))
  const started: PostgresServer[] = []
  t.after(async () => {
    for (const server of started.reverse()) await server.stop('immediate').catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })
  const pgCtl = (data: string, ...args: string[]) => postgresProgram('pg_ctl', ['-D', data, '-l', `${data}.log`, '-w', '-t', '60', ...args])

  async function startServer(dataDirectory: string, settings: string[] = []): Promise<PostgresServer> {
    const port = await freePort()
    appendFileSync(join(dataDirectory, 'postgresql.conf'), [`port = ${port}`, ...settings, ''].join('\n'))
    const server: PostgresServer = {
      port,
      dataDirectory,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      start: () => pgCtl(dataDirectory, 'start'),
      stop: (mode = 'fast') => pgCtl(dataDirectory, '-m', mode, 'stop'),
    }
    await server.start()
    started.push(server)
    return server
  }

  return {
    dir,
    startServer,
    async createServer(name, options = {}) {
      const dataDirectory = join(dir, name)
      await postgresProgram('initdb', ['-D', dataDirectory, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C', '--no-instructions'])
      if (options.hba) writeFileSync(join(dataDirectory, 'pg_hba.conf'), [...options.hba, ''].join('\n'))
      const settings = [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'shared_buffers = 16MB',
        'max_connections = 60',
        'max_wal_senders = 4',
        'fsync = off',
        ...(options.settings ?? []),
      ]
      return startServer(dataDirectory, settings)
    },
  }
}
