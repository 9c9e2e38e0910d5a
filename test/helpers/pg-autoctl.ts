import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { chownSync, closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

// Running pg_autoctl and the deploy/pg-auto-failover scripts for the test topology: as the
// postgres user when the tests run as root (pg_autoctl refuses root), with its configuration and
// state files inside the topology's directory instead of that user's home.

/** PostgreSQL 15's programs, the version Debian's postgresql-15-auto-failover is built for. */
const bindir = process.env.PG_BINDIR ?? '/usr/lib/postgresql/15/bin'
const scripts = new URL('../../deploy/pg-auto-failover/', import.meta.url).pathname

interface Account {
  uid: number
  gid: number
}

function postgresAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim())
  return { uid: id('-u'), gid: id('-g') }
}

export interface PgAutoctlRunner {
  /** Makes `path` (made by the tests) the postgres user's. */
  own(path: string): void
  /** `pg_autoctl …` to the end; its standard output. */
  run(args: readonly string[]): Promise<string>
  /** One of deploy/pg-auto-failover's scripts to the end, with `env` added to the runner's environment. */
  script(name: string, env: Record<string, string>, log: string): Promise<void>
  /**
   * A new data directory for `pg_autoctl create` to take over as it is, made without the fsync
   * calls of pg_autoctl's own initdb (nothing here outlives the machine): initdb is the slowest
   * step of building the monitor and the primary on a busy machine, and this way both run at once.
   */
  initdb(pgdata: string, log: string): Promise<void>
  /** `pg_autoctl run` for one data directory, in a process group of its own, writing to `log`. */
  service(pgdata: string, log: string): ChildProcess
}

export function pgAutoctlRunner(home: string): PgAutoctlRunner {
  const account = postgresAccount()
  const env = {
    PATH: `${bindir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'share'),
    XDG_RUNTIME_DIR: join(home, 'run'),
    PG_BINDIR: bindir,
    LANG: 'C.UTF-8',
  }
  const start = (command: string, args: readonly string[], extra: Record<string, string>, log: string): ChildProcess => {
    const output = openSync(log, 'a')
    try {
      return spawn(command, args, { env: { ...env, ...extra }, ...account, detached: true, stdio: ['ignore', output, output] })
    } finally {
      closeSync(output)
    }
  }
  const finish = async (child: ChildProcess, what: string, log: string) => {
    const [code] = (await once(child, 'exit')) as [number | null]
    if (code !== 0) throw new Error(`${what} exited with ${code}:\n${tail(log)}`)
  }
  return {
    own(path) {
      if (account) chownSync(path, account.uid, account.gid)
    },
    async run(args) {
      const child = spawn('pg_autoctl', args, { env, ...account, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const [code] = (await once(child, 'exit')) as [number | null]
      if (code !== 0) throw new Error(`pg_autoctl ${args.join(' ')} exited with ${code}: ${stderr.slice(-2000)}`)
      return stdout
    },
    async script(name, extra, log) {
      await finish(start(join(scripts, name), [], extra, log), name, log)
    },
    async initdb(pgdata, log) {
      await finish(start(join(bindir, 'initdb'), ['--no-sync', '--auth=trust', '--pgdata', pgdata], {}, log), 'initdb', log)
    },
    service(pgdata, log) {
      return start('pg_autoctl', ['run', '--pgdata', pgdata], {}, log)
    },
  }
}

/** The last lines of a log, for an error message. */
export function tail(log: string, lines = 40): string {
  try {
    return readFileSync(log, 'utf8').split('\n').slice(-lines).join('\n')
  } catch {
    return `(no ${log})`
  }
}
