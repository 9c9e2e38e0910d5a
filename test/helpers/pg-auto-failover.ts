import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { freePort } from './free-port.ts'
import { pgAutoctlRunner, type PgAutoctlRunner, tail } from './pg-autoctl.ts'
import { killProcessTree, processTree } from './process-tree.ts'

// Issue 26: the pg_auto_failover topology Triad's PostgreSQL runs on for high availability
// (docs/deployment.md ("High availability")) on one machine: a monitor and three data nodes, each its own
// `pg_autoctl run` on its own port of 127.0.0.1, built with the deploy/pg-auto-failover scripts
// an operator runs, with the test values below. No TLS on the nodes (--no-ssl: nothing leaves the
// loopback interface), and pg_autoctl's default --ssl-mode, so Triad gets the URI exactly as
// pg_autoctl prints it for such nodes: sslmode=prefer (issue 35; every sslmode against servers
// with and without TLS is test/core/postgres-tls.test.ts's).

/**
 * The monitor's timing for tests (deploy/pg-auto-failover/monitor.conf has the production values
 * and what each one does): a killed primary is called unhealthy about 2 s after it stopped
 * reporting, and the standby chosen is promoted 3 s after the election, instead of 20 s and 30 s.
 */
const testMonitorSettings = {
  'pgautofailover.health_check_period': 1000,
  'pgautofailover.health_check_timeout': 1000,
  'pgautofailover.health_check_max_retries': 1,
  'pgautofailover.health_check_retry_delay': 500,
  'pgautofailover.node_considered_unhealthy_timeout': 2000,
  'pgautofailover.primary_demote_timeout': 3000,
}
/** Seconds; below primary_demote_timeout, so that an isolated primary stands down before another is promoted. */
const testNetworkPartitionTimeout = 2
/** pg_autoctl would give each of the four servers a quarter of the machine's memory. */
const testMemorySettings = "shared_buffers = '16MB'\neffective_cache_size = '128MB'\nmaintenance_work_mem = '16MB'\nwork_mem = '4MB'\n"

export interface NodeState {
  name: string
  port: number
  reported: string
  goal: string
}

export interface StateEvent {
  at: Date
  name: string
  reported: string
  goal: string
  description: string
}

export interface FailoverNode {
  /** The name it is registered under with the monitor: node1, node2, node3. */
  readonly name: string
  readonly port: number
  readonly pgdata: string
  /** The `pg_autoctl run` process (the keeper) the helper started, while it runs. */
  readonly keeperPid: number | undefined
  /** PostgreSQL's postmaster, from its postmaster.pid, while it runs. */
  readonly postmasterPid: number | undefined
}

export interface PgAutoFailover {
  /** `pg_autoctl show uri --formation default` with Triad's role in it: every node, target_session_attrs=read-write. */
  uri: string
  database: string
  user: string
  nodes: readonly FailoverNode[]
  /** How long building the topology took, in ms. */
  buildMs: number
  /** Every data node as the monitor sees it (pgautofailover.node). */
  states(): Promise<NodeState[]>
  /** The monitor's event log (pgautofailover.event) since `since`, oldest first. */
  events(since: Date): Promise<StateEvent[]>
  /** The node the monitor has as primary, settled (reported state = goal state); throws while a failover is under way. */
  primary(): Promise<FailoverNode>
  /** `kill -9` of a node's keeper, its postmaster and every child of the postmaster. */
  killNode(node: FailoverNode): Promise<void>
  /** killNode of the current primary; answers it. */
  killPrimary(): Promise<FailoverNode>
  /** Starts the node's keeper again (it rejoins as a secondary: wait for that with waitForState). */
  restartNode(node: FailoverNode): void
  /** Polls the monitor until `predicate` holds; answers the states that satisfied it. */
  waitForState(predicate: (states: NodeState[]) => boolean, timeoutMs: number): Promise<NodeState[]>
  /** Stops every process and removes the directory (also done when the process exits or is interrupted). */
  stop(): Promise<void>
}

/** A primary and two secondaries, all settled: the topology's healthy state. */
export function onePrimaryTwoSecondaries(states: NodeState[]): boolean {
  const settled = states.filter((state) => state.reported === state.goal)
  return (
    settled.length === 3 &&
    settled.filter((state) => state.reported === 'primary').length === 1 &&
    settled.filter((state) => state.reported === 'secondary').length === 2
  )
}

const settledPrimary = (state: NodeState) => state.reported === state.goal && ['primary', 'wait_primary', 'single'].includes(state.reported)

interface NodeProcess extends FailoverNode {
  log: string
  keeper: ChildProcess | undefined
  exited: Promise<unknown>
}

function livePid(pidFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
    process.kill(pid, 0)
    return pid
  } catch {
    return undefined
  }
}

function nodeProcess(name: string, port: number, dir: string): NodeProcess {
  const pgdata = join(dir, name)
  return {
    name,
    port,
    pgdata,
    log: join(dir, 'logs', `${name}.log`),
    keeper: undefined,
    exited: Promise.resolve(),
    get keeperPid() {
      return this.keeper?.exitCode === null && this.keeper.signalCode === null ? this.keeper.pid : undefined
    },
    get postmasterPid() {
      return livePid(join(pgdata, 'postmaster.pid'))
    },
  }
}

async function waitUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = performance.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    const value = await probe().catch((error: unknown) => {
      lastError = error
      return undefined
    })
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`, { cause: lastError })
    await sleep(100)
  }
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>()
  for (let tries = 0; ports.size < count && tries < count * 20; tries++) ports.add(await freePort())
  return [...ports]
}

/** The processes of one topology and the monitor's view of them; no knowledge of how it is built. */
interface Topology {
  dir: string
  runner: PgAutoctlRunner
  monitor: NodeProcess
  nodes: NodeProcess[]
  monitorPool: pg.Pool
  startService(node: NodeProcess): void
  states(): Promise<NodeState[]>
  waitForState(predicate: (states: NodeState[]) => boolean, timeoutMs: number): Promise<NodeState[]>
  stop(): Promise<void>
}

async function openTopology(): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), 'triad-pgaf-'))
  const runner = pgAutoctlRunner(dir)
  runner.own(dir)
  for (const sub of ['logs', 'config', 'share', 'run']) {
    mkdirSync(join(dir, sub), { mode: 0o700 })
    runner.own(join(dir, sub))
  }
  const [monitorPort, ...nodePorts] = await distinctFreePorts(4)
  const monitor = nodeProcess('monitor', monitorPort, dir)
  const nodes = nodePorts.map((port, index) => nodeProcess(`node${index + 1}`, port, dir))
  const everyProcess = [monitor, ...nodes]
  const monitorPool = new pg.Pool({ host: '127.0.0.1', port: monitorPort, user: 'postgres', database: 'pg_auto_failover', max: 2 })
  monitorPool.on('error', () => {})

  const killEverything = () => killProcessTree(everyProcess.flatMap((node) => [node.keeperPid, node.postmasterPid].filter((pid) => pid !== undefined)))
  // Synchronous: an 'exit' listener cannot wait. The processes run in groups of their own, so an
  // interrupted test run would otherwise leave them behind.
  const removeNow = () => {
    killEverything()
    rmSync(dir, { recursive: true, force: true })
  }
  const onSignal = (signal: NodeJS.Signals) => {
    removeNow()
    process.kill(process.pid, signal)
  }
  process.once('exit', removeNow)
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)

  const states = async (): Promise<NodeState[]> => {
    const { rows } = await monitorPool.query<NodeState>(
      `select nodename as name, nodeport as port, reportedstate::text as reported, goalstate::text as goal
         from pgautofailover.node where formationid = 'default' order by nodeid`,
    )
    return rows
  }
  let lastStates: NodeState[] = []
  let stopped = false
  return {
    dir,
    runner,
    monitor,
    nodes,
    monitorPool,
    startService(node) {
      const keeper = runner.service(node.pgdata, node.log)
      node.keeper = keeper
      node.exited = once(keeper, 'exit')
    },
    states,
    waitForState: (predicate, timeoutMs) =>
      waitUntil(
        async () => {
          lastStates = await states()
          return predicate(lastStates) ? lastStates : undefined
        },
        timeoutMs,
        () => `the monitor's node states; last seen ${JSON.stringify(lastStates)}\n${everyProcess.map((node) => `--- ${node.name}\n${tail(node.log, 15)}`).join('\n')}`,
      ),
    async stop() {
      if (stopped) return
      stopped = true
      await monitorPool.end()
      // pg_autoctl stops its PostgreSQL with a fast shutdown on SIGTERM; what is left after 10 s is killed.
      for (const node of everyProcess) node.keeper?.kill('SIGTERM')
      await Promise.race([Promise.all(everyProcess.map((node) => node.exited)), sleep(10_000)])
      const killed = killEverything()
      await waitUntil(async () => (processTree([...killed]).size === 0 ? true : undefined), 10_000, () => 'the killed processes to end')
      process.removeListener('exit', removeNow)
      process.removeListener('SIGINT', onSignal)
      process.removeListener('SIGTERM', onSignal)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The operator's steps of deploy/pg-auto-failover/README.md: the monitor, then the first data
 * node (the primary, which creates `database`, and here the `user` role that owns it), then the
 * two others at once; done when a primary and two secondaries are settled.
 */
async function build(topology: Topology, database: string, user: string): Promise<void> {
  const { dir, runner, monitor, nodes, monitorPool } = topology
  const [first, ...others] = nodes
  writeFileSync(join(dir, 'monitor.conf'), testMemorySettings + Object.entries(testMonitorSettings).map(([name, value]) => `${name} = ${value}\n`).join(''))
  writeFileSync(join(dir, 'node.conf'), testMemorySettings)
  const common = { PGAF_HOSTNAME: '127.0.0.1', PGAF_LISTEN: '127.0.0.1', PGAF_AUTH: 'trust', PGAF_SSL: '--no-ssl' }

  await Promise.all([monitor, first].map((node) => runner.initdb(node.pgdata, node.log)))
  await runner.script('create-monitor.sh', { ...common, PGDATA: monitor.pgdata, PGPORT: String(monitor.port), PGAF_SETTINGS: join(dir, 'monitor.conf') }, monitor.log)
  topology.startService(monitor)
  await waitUntil(() => monitorPool.query('select 1'), 30_000, () => `the monitor to accept connections\n${tail(monitor.log)}`)
  const monitorUri = (await runner.run(['show', 'uri', '--pgdata', monitor.pgdata, '--formation', 'monitor'])).trim()

  const createNode = async (node: NodeProcess) => {
    const env = {
      ...common,
      PGDATA: node.pgdata,
      PGPORT: String(node.port),
      PGAF_NAME: node.name,
      PGAF_DBNAME: database,
      PGAF_MONITOR: monitorUri,
      PGAF_SETTINGS: join(dir, 'node.conf'),
      PGAF_NETWORK_PARTITION_TIMEOUT: String(testNetworkPartitionTimeout),
    }
    await runner.script('create-node.sh', env, node.log)
    topology.startService(node)
  }
  await createNode(first)
  await topology.waitForState((states) => states.some((state) => state.name === first.name && settledPrimary(state)), 60_000)
  await waitUntil(() => prepareDatabase(first.port, database, user).then(() => true), 30_000, () => `${first.name} to accept connections\n${tail(first.log)}`)
  await Promise.all(others.map(createNode))
  await topology.waitForState(onePrimaryTwoSecondaries, 90_000)

  // The monitor sets number-sync-standbys to 1 itself when the second standby registers
  // (pg_auto_failover 2.0). Set while standbys still join, it can leave them waiting forever in
  // wait_standby, so it is only checked now, and set if it is not 1 (README.md, step 3).
  const { rows } = await monitorPool.query<{ count: number }>(`select number_sync_standbys as count from pgautofailover.formation where formationid = 'default'`)
  if (rows[0].count !== 1) {
    await monitorPool.query(`select pgautofailover.set_formation_number_sync_standbys('default', 1)`)
    await topology.waitForState(onePrimaryTwoSecondaries, 60_000)
  }
}

/** The role Triad connects as, owner of its database; then a checkpoint, so that the standbys' pg_basebackup does not wait for a spread one (minutes). */
async function prepareDatabase(port: number, database: string, user: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database })
  await client.connect()
  try {
    const { rowCount } = await client.query('select 1 from pg_roles where rolname = $1', [user])
    if (!rowCount) await client.query(`create role "${user}" login`)
    await client.query(`alter database "${database}" owner to "${user}"`)
    await client.query('checkpoint')
  } finally {
    await client.end()
  }
}

/**
 * Builds the topology in a fresh temporary directory (see `build`) and answers it running: a
 * primary and two secondaries, number-sync-standbys 1.
 */
export async function startPgAutoFailover(options: { database?: string; user?: string } = {}): Promise<PgAutoFailover> {
  const started = performance.now()
  const database = options.database ?? 'triad'
  const user = options.user ?? 'triad'
  const topology = await openTopology()
  const { runner, monitor, nodes, monitorPool } = topology
  let uri: string
  try {
    await build(topology, database, user)
    const shown = await runner.run(['show', 'uri', '--pgdata', monitor.pgdata, '--formation', 'default'])
    uri = shown.trim().replace('postgres://', `postgres://${user}@`)
  } catch (error) {
    await topology.stop()
    throw error
  }

  const own = (node: { name: string }) => {
    const found = nodes.find((candidate) => candidate.name === node.name)
    if (!found) throw new Error(`unknown node ${node.name}`)
    return found
  }
  const primary = async () => {
    const states = await topology.states()
    const primaries = states.filter(settledPrimary)
    if (primaries.length !== 1) throw new Error(`no settled primary: ${JSON.stringify(states)}`)
    return own(primaries[0])
  }
  const killNode = async (node: FailoverNode) => {
    const victim = own(node)
    killProcessTree([victim.keeperPid, victim.postmasterPid].filter((pid) => pid !== undefined))
    await victim.exited
    victim.keeper = undefined
  }
  return {
    uri,
    database,
    user,
    nodes,
    buildMs: performance.now() - started,
    states: topology.states,
    async events(since) {
      const { rows } = await monitorPool.query<StateEvent>(
        `select eventtime as at, nodename as name, reportedstate::text as reported, goalstate::text as goal, description
           from pgautofailover.event where eventtime >= $1 order by eventid`,
        [since],
      )
      return rows
    },
    primary,
    killNode,
    async killPrimary() {
      const node = await primary()
      await killNode(node)
      return node
    },
    restartNode(node) {
      const restarted = own(node)
      if (restarted.keeperPid !== undefined) throw new Error(`${restarted.name}'s keeper is running`)
      topology.startService(restarted)
    },
    waitForState: topology.waitForState,
    stop: topology.stop,
  }
}
