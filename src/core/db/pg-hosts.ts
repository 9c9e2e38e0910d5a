import pg from 'pg'
import { DatabaseUnavailableError } from './errors.ts'
import { postgresTls } from './pg-tls.ts'
import type { PostgresHost, PostgresUrl } from './postgres-url.ts'

/**
 * libpq's `target_session_attrs=read-write` test, in one round trip: a standby is in recovery,
 * and a primary being demoted (or set read-only by an operator) refuses writes.
 */
const WRITABLE = `not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off'`
/**
 * With several hosts (pg_auto_failover), also synchronous replication on: a standby just promoted
 * takes writes for a few seconds (`wait_primary`) before the other standby follows it and
 * replication turns synchronous; a write acknowledged then would be on one machine only. With
 * number-sync-standbys 1 a primary never turns it off again, so checking on connect is enough.
 */
const REPLICATED = `current_setting('synchronous_standby_names') <> ''`

/** A host answered but does not take writes (a standby, or a primary on its way down). */
class HostNotWritableError extends DatabaseUnavailableError {
  constructor(host: PostgresHost) {
    super(`${host.host}:${host.port} does not accept writes yet (a standby, a primary being demoted, or a new primary before synchronous replication is on)`)
    this.name = 'HostNotWritableError'
  }
}

/**
 * Which host of DATABASE_URL new connections go to. With several hosts (pg_auto_failover's URI)
 * or `target_session_attrs=read-write`, a new connection is kept only if its host takes writes
 * (with several hosts: and replicates them synchronously);
 * a host that refuses the connection or is not writable moves every later connection on to the
 * next host, and a host that proved writable is where they all go until it fails. Existing
 * connections to a primary that died fail their next statement and are dropped (pg-pool.ts).
 */
export interface HostSelection {
  /** The client class for pg.Pool: each new client connects to the current host. */
  Client: typeof pg.Client
  /** How many hosts one acquisition may try before giving up. */
  hostCount: number
}

type ConnectCallback = ((error: Error) => void) | ((error: null, client: pg.Client) => void)

export function selectHosts(url: PostgresUrl, requireSynchronousStandby = url.hosts.length > 1): HostSelection {
  const { hosts } = url
  const checkWritable = hosts.length > 1 || requireSynchronousStandby || url.targetSessionAttrs === 'read-write' || url.targetSessionAttrs === 'primary'
  const check = `select ${requireSynchronousStandby ? `${WRITABLE} and ${REPLICATED}` : WRITABLE} as writable`
  if (!['any', 'read-write', 'primary'].includes(url.targetSessionAttrs))
    throw new Error(`${url.variable}: target_session_attrs=${url.targetSessionAttrs} cannot be used: Triad writes, so it needs read-write (or any)`)
  // Reads the certificate files of the string now: one that is missing fails the start.
  const tls = postgresTls(url)
  let current = 0
  const failed = (index: number) => {
    if (current === index) current = (index + 1) % hosts.length
  }

  class HostClient extends pg.Client {
    private readonly hostIndex: number

    constructor(options: pg.ClientConfig) {
      const index = current
      super({ ...options, connectionString: url.forHost(hosts[index]), ...tls.forHost(hosts[index]) })
      this.hostIndex = index
      // A client that loses its connection emits 'error', and an unheard one would end the
      // process: pg-pool listens only while a client is idle, not while it connects (the host
      // dying during the check) or is checked out. The statement that was running, or the
      // next, fails with the error, and that is where it is handled.
      this.on('error', () => {})
    }

    // pg-pool connects with a callback; Triad's own code never calls connect directly.
    override connect(): Promise<pg.Client>
    override connect(callback: ConnectCallback): void
    override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
      const connecting = this.connectToWritable()
      if (!callback) return connecting
      connecting.then(
        (client) => (callback as (error: null, client: pg.Client) => void)(null, client),
        (error: Error) => (callback as (error: Error) => void)(error),
      )
      return undefined
    }

    private async connectToWritable(): Promise<this> {
      try {
        await super.connect()
      } catch (error) {
        failed(this.hostIndex)
        throw tls.explain(error, hosts[this.hostIndex])
      }
      if (!checkWritable) return this
      let writable = false
      try {
        writable = (await this.query<{ writable: boolean }>(check)).rows[0]?.writable === true
      } finally {
        if (!writable) {
          failed(this.hostIndex)
          this.end().catch(() => {})
        }
      }
      if (!writable) throw new HostNotWritableError(hosts[this.hostIndex])
      current = this.hostIndex
      return this
    }
  }
  return { Client: HostClient, hostCount: hosts.length }
}
