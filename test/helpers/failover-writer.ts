import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

export interface Acknowledged {
  id: number
  /** The port of the node that acknowledged it. */
  port: number
  /** Date.now() when the acknowledgement arrived (wall clock, to compare with the monitor's events). */
  at: number
}

export interface FailoverWriter {
  readonly acknowledged: readonly Acknowledged[]
  /** Ids whose insert failed: written or not, nobody was told it was. */
  readonly unknown: readonly number[]
  /** Resolves with the first acknowledgement that arrives after `time` (Date.now()) from a node other than `notPort`. */
  firstAfter(time: number, notPort: number, timeoutMs: number): Promise<Acknowledged>
  stop(): Promise<void>
}

/**
 * What libpq's target_session_attrs=read-write looks for (not in recovery, not read-only), and
 * synchronous replication on. A standby just promoted by pg_auto_failover accepts writes for a
 * few seconds with it off (state wait_primary, until another standby follows it): a write
 * acknowledged then is on one node only. Once on, with number-sync-standbys 1 it stays on for as
 * long as the node is primary, so checking when connecting is enough.
 */
const WRITABLE = `select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off'
                    and current_setting('synchronous_standby_names') <> '' as writable`

/** Connects to whichever of `ports` accepts writes, synchronously replicated, now, trying each in turn. */
async function connectToWritable(ports: readonly number[], connection: pg.ClientConfig): Promise<{ client: pg.Client; port: number } | undefined> {
  for (const port of ports) {
    const client = new pg.Client({ ...connection, host: '127.0.0.1', port, connectionTimeoutMillis: 1000, query_timeout: 5000 })
    client.on('error', () => {})
    try {
      await client.connect()
      const { rows } = await client.query<{ writable: boolean }>(WRITABLE)
      if (rows[0].writable) return { client, port }
    } catch {}
    await client.end().catch(() => {})
  }
  return undefined
}

/**
 * Inserts ids 1, 2, 3… one row at a time, each its own transaction, into `table` (id bigint
 * primary key) on whichever node accepts writes, moving to the next one when its node fails.
 * node-postgres takes one host only, so the writer chooses the node itself.
 */
export function startFailoverWriter(ports: readonly number[], connection: pg.ClientConfig, table: string): FailoverWriter {
  const acknowledged: Acknowledged[] = []
  const unknown: number[] = []
  let running = true
  let nextId = 1
  const loop = (async () => {
    let current: { client: pg.Client; port: number } | undefined
    while (running) {
      current ??= await connectToWritable(ports, connection)
      if (!current) {
        await sleep(50)
        continue
      }
      const id = nextId++
      try {
        await current.client.query(`insert into ${table} (id) values ($1)`, [id])
        acknowledged.push({ id, port: current.port, at: Date.now() })
      } catch {
        unknown.push(id)
        await current.client.end().catch(() => {})
        current = undefined
      }
      await sleep(10)
    }
    await current?.client.end().catch(() => {})
  })()
  return {
    acknowledged,
    unknown,
    async firstAfter(time, notPort, timeoutMs) {
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const found = acknowledged.find((ack) => ack.at > time && ack.port !== notPort)
        if (found) return found
        if (performance.now() > deadline) throw new Error(`no write acknowledged within ${timeoutMs} ms`)
        await sleep(20)
      }
    },
    async stop() {
      running = false
      await loop
    },
  }
}
