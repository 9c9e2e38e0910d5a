import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { freePort } from './free-port.ts'
import { hasCommand } from './has-command.ts'

const HOST = '127.0.0.1'
const SENTINEL_COUNT = 3
const shipped = (name: string) => readFileSync(new URL(`../../deploy/redis/${name}`, import.meta.url), 'utf8')
/** Fast enough for a test, slow enough that a loaded 2-core machine does not fail over by mistake. */
const DOWN_AFTER_MS = 1000
/**
 * Bounds a failover's steps (a promotion not seen within it is abandoned) and is half the wait
 * before a sentinel tries again after a failed election; the default (3 min) would stall a test.
 */
const FAILOVER_TIMEOUT_MS = 3000

export interface SentinelAddress {
  host: string
  port: number
}

export interface RedisSentinelTopology {
  sentinels: SentinelAddress[]
  masterName: string
  /** The Redis nodes' password (`requirepass`), for a client of their own. */
  password: string
  /** The sentinels' password. */
  sentinelPassword: string
  /** `redis+sentinel://…` for Triad's REDIS_URL, both passwords in it. */
  url: string
  /** The port of the node the sentinels last agreed is the master. */
  masterPort(): number
  /** The port of the other node. */
  replicaPort(): number
  /** Asks the node on `port` something over a connection of its own (authenticated, closed after). */
  askNode<T>(port: number, question: (client: Redis) => Promise<T>): Promise<T>
  /** `kill -9` of the current master's redis-server; resolves once it has exited. */
  killMaster(): Promise<void>
  /**
   * Resolves once every sentinel names a master other than the killed one, with that master's
   * port and the time from the kill to the first `+switch-master` a sentinel published.
   */
  waitForFailover(limitMs?: number): Promise<{ masterPort: number; failoverMs: number }>
  /** Starts the killed node again, on its port, with its own configuration (as a master, empty). */
  restartKilled(): Promise<void>
  /** Resolves once the restarted node replicates the current master (the sentinels made it a replica); answers how long that took since `restartKilled`. */
  waitForRejoin(limitMs?: number): Promise<number>
  /** Stops every process and removes the directory (unless it was given). */
  stop(): Promise<void>
}

interface Node {
  port: number
  config: string
  process?: ChildProcess
  output: string
}

const running = new Set<ChildProcess>()
let exitHookInstalled = false

/**
 * A process left behind would hold its port and go on failing over: each is killed when the test
 * process exits, even after a failed test (not when a signal kills the test process itself).
 */
function killOnExit(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', () => {
      for (const left of running) left.kill('SIGKILL')
    })
  }
  running.add(child)
  child.once('exit', () => running.delete(child))
}

function launch(node: Node, binary: 'redis-server' | 'redis-sentinel'): void {
  const child = spawn(binary, [node.config], { stdio: ['ignore', 'pipe', 'pipe'] })
  node.output = ''
  const keep = (chunk: Buffer) => (node.output = (node.output + chunk.toString()).slice(-4000))
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  child.on('error', (error) => keep(Buffer.from(String(error))))
  killOnExit(child)
  node.process = child
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
}

/** The first word of a configuration line (the first two for `sentinel …` lines), to replace it. */
const directiveOf = (line: string) => {
  const words = line.trim().toLowerCase().split(/\s+/)
  return words[0] === 'sentinel' ? `${words[0]} ${words[1]}` : (words[0] ?? '')
}

/** A shipped file with the lines `overrides` set (same directive) taken out and `overrides` added. */
function configFrom(template: string, overrides: string[]): string {
  const replaced = new Set(overrides.map(directiveOf))
  const kept = template.split('\n').filter((line) => line.trim().startsWith('#') || !replaced.has(directiveOf(line)))
  return [...kept, '# The test topology:', ...overrides].join('\n')
}

/** Where a test node differs from the shipped master.conf and replica.conf: its port, its directory, the console for its log. */
function nodeConfig(dir: string, port: number, password: string, masterPort?: number): string {
  const nodeDir = join(dir, `node-${port}`)
  mkdirSync(nodeDir, { recursive: true })
  return configFrom(shipped(masterPort ? 'replica.conf' : 'master.conf'), [
    `port ${port}`,
    `bind ${HOST}`,
    `dir ${nodeDir}`,
    'logfile ""',
    `requirepass ${password}`,
    `masterauth ${password}`,
    ...(masterPort ? [`replicaof ${HOST} ${masterPort}`] : []),
  ])
}

/** Where a test sentinel differs from the shipped sentinel.conf: as above, and faster to decide (a failover in about 2 s, not 7). */
function sentinelConfig(dir: string, port: number, masterName: string, masterPort: number, passwords: { node: string; sentinel: string }): string {
  return configFrom(shipped('sentinel.conf'), [
    `port ${port}`,
    `bind ${HOST}`,
    `dir ${dir}`,
    'logfile ""',
    `requirepass ${passwords.sentinel}`,
    `sentinel monitor ${masterName} ${HOST} ${masterPort} 2`,
    `sentinel auth-pass ${masterName} ${passwords.node}`,
    `sentinel down-after-milliseconds ${masterName} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${masterName} ${FAILOVER_TIMEOUT_MS}`,
  ])
}

/** A short-lived connection for one question (no retries: a process not up yet is asked again). */
async function ask<T>(port: number, password: string, question: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: HOST, port, password, lazyConnect: true, retryStrategy: () => null, connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 0 })
  client.on('error', () => {})
  try {
    await client.connect()
    return await question(client)
  } finally {
    client.disconnect()
  }
}

/** Polls `check` every 100 ms until it holds; fails naming `what` after `limitMs`. */
async function waitUntil(what: string, limitMs: number, check: () => Promise<boolean>, details: () => string): Promise<void> {
  const deadline = performance.now() + limitMs
  for (;;) {
    if (await check().catch(() => false)) return
    assert.ok(performance.now() < deadline, `${what} within ${limitMs} ms: ${details()}`)
    await sleep(100)
  }
}

const infoField = (info: string, field: string) => new RegExp(`^${field}:(.*)\\r?$`, 'm').exec(info)?.[1]?.trim()

/**
 * A Redis master, one replica and three sentinels (quorum 2) on free ports of 127.0.0.1, as
 * child processes, each from the shipped deploy/redis/*.conf with its port, directory, passwords
 * (random) and faster sentinel timings put in; the files go to `options.dir` (a new temporary
 * directory by default). Resolves once every sentinel agrees on the master, knows the replica and
 * the other sentinels (a failover can happen from then on): a few seconds. Nothing is persisted
 * (`save ""`, no AOF). Everything is killed by `stop()`, and when the test process exits.
 */
export async function startRedisSentinelTopology(options: { dir?: string } = {}): Promise<RedisSentinelTopology> {
  assert.ok(hasCommand('redis-server') && hasCommand('redis-sentinel'), 'redis-server and redis-sentinel are needed (apt-get install redis-server redis-sentinel)')
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'triad-sentinel-'))
  mkdirSync(dir, { recursive: true })
  const masterName = /^sentinel monitor (\S+)/m.exec(shipped('sentinel.conf'))?.[1] ?? assert.fail('deploy/redis/sentinel.conf names no master')
  const passwords = { node: randomBytes(12).toString('hex'), sentinel: randomBytes(12).toString('hex') }
  const [firstPort, secondPort, ...sentinelPorts] = await distinctFreePorts(2 + SENTINEL_COUNT)
  const configFile = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, `${text}\n`)
    return path
  }
  const nodes: Node[] = [
    { port: firstPort, config: configFile(`node-${firstPort}.conf`, nodeConfig(dir, firstPort, passwords.node)), output: '' },
    { port: secondPort, config: configFile(`node-${secondPort}.conf`, nodeConfig(dir, secondPort, passwords.node, firstPort)), output: '' },
  ]
  const sentinels: Node[] = sentinelPorts.map((port) => ({
    port,
    config: configFile(`sentinel-${port}.conf`, sentinelConfig(dir, port, masterName, firstPort, passwords)),
    output: '',
  }))
  const everything = () => [...nodes, ...sentinels]
  const outputs = () => everything().map((node) => `[${node.port}] ${node.output.slice(-600)}`).join('\n')

  const askNode = <T>(port: number, question: (client: Redis) => Promise<T>) => ask(port, passwords.node, question)
  const askSentinel = (port: number, ...args: string[]) => ask(port, passwords.sentinel, (client) => client.call('SENTINEL', ...args, masterName))
  /** Whether the node on `port` is a replica of `masterPort` with its link up. */
  const replicates = async (port: number, masterPort: number) => {
    const info = await askNode(port, (client) => client.info('replication'))
    return infoField(info, 'role') === 'slave' && infoField(info, 'master_port') === String(masterPort) && infoField(info, 'master_link_status') === 'up'
  }
  const masterPortSeenBy = async (sentinelPort: number) => {
    const reply = (await askSentinel(sentinelPort, 'get-master-addr-by-name')) as [string, string] | null
    return reply ? Number(reply[1]) : undefined
  }
  /** Whether a sentinel can fail over: it sees the replica up and linked, and enough sentinels to reach the quorum and elect a leader. */
  const readyToFailOver = async (sentinelPort: number, replicaPort: number) => {
    if (!String(await askSentinel(sentinelPort, 'ckquorum')).startsWith(`OK ${SENTINEL_COUNT} usable`)) return false
    const replicas = (await askSentinel(sentinelPort, 'replicas')) as string[][]
    return replicas.some((fields) => {
      const field = (name: string) => fields[fields.indexOf(name) + 1]
      return field('port') === String(replicaPort) && field('flags') === 'slave' && field('master-link-status') === 'ok'
    })
  }

  let master = nodes[0]
  let killed: Node | undefined
  let killedAt = 0
  let restartedAt = 0
  let switchedAt: number | undefined
  const watchers: Redis[] = []

  const stop = async () => {
    for (const watcher of watchers) watcher.disconnect()
    const exits = everything()
      .map((node) => node.process)
      .filter((child): child is ChildProcess => child !== undefined && child.exitCode === null && child.signalCode === null)
      .map((child) => {
        const exited = once(child, 'exit')
        child.kill('SIGKILL')
        return exited
      })
    await Promise.all(exits)
    if (!options.dir) rmSync(dir, { recursive: true, force: true })
  }

  try {
    launch(nodes[0], 'redis-server')
    launch(nodes[1], 'redis-server')
    await waitUntil('the replica synced with the master', 15_000, () => replicates(secondPort, firstPort), outputs)
    for (const sentinel of sentinels) launch(sentinel, 'redis-sentinel')
    await waitUntil('every sentinel saw the master, the replica and the other sentinels', 20_000, async () => {
      for (const sentinel of sentinels) {
        if ((await masterPortSeenBy(sentinel.port)) !== firstPort || !(await readyToFailOver(sentinel.port, secondPort))) return false
      }
      return true
    }, outputs)
    // The failover's moment, as the sentinels announce it (the first of them to do so).
    for (const sentinel of sentinels) {
      const watcher = new Redis({ host: HOST, port: sentinel.port, password: passwords.sentinel, lazyConnect: true })
      watcher.on('error', () => {})
      watcher.on('message', () => (switchedAt ??= performance.now()))
      await watcher.connect()
      await watcher.subscribe('+switch-master')
      watchers.push(watcher)
    }
  } catch (error) {
    await stop()
    throw error
  }

  const other = (node: Node) => (node === nodes[0] ? nodes[1] : nodes[0])
  const addresses = sentinels.map((sentinel) => `${HOST}:${sentinel.port}`).join(',')
  return {
    sentinels: sentinels.map((sentinel) => ({ host: HOST, port: sentinel.port })),
    masterName,
    password: passwords.node,
    sentinelPassword: passwords.sentinel,
    url: `redis+sentinel://:${passwords.node}@${addresses}/${masterName}?sentinelPassword=${passwords.sentinel}`,
    masterPort: () => master.port,
    replicaPort: () => other(master).port,
    askNode,
    async killMaster() {
      const child = master.process
      assert.ok(child && child.exitCode === null, 'the master is running')
      const exited = once(child, 'exit')
      switchedAt = undefined
      killedAt = performance.now()
      child.kill('SIGKILL')
      await exited
      killed = master
    },
    async waitForFailover(limitMs = 30_000) {
      assert.ok(killed, 'killMaster() first')
      const survivor = other(killed)
      await waitUntil(`every sentinel named ${survivor.port} the master`, limitMs, async () => {
        for (const sentinel of sentinels) if ((await masterPortSeenBy(sentinel.port)) !== survivor.port) return false
        return switchedAt !== undefined
      }, outputs)
      master = survivor
      return { masterPort: survivor.port, failoverMs: (switchedAt ?? NaN) - killedAt }
    },
    async restartKilled() {
      assert.ok(killed, 'killMaster() first')
      const restarting = killed
      restartedAt = performance.now()
      launch(restarting, 'redis-server')
      await waitUntil(`the restarted node on ${restarting.port} answered`, 10_000, async () => (await askNode(restarting.port, (client) => client.ping())) === 'PONG', outputs)
    },
    async waitForRejoin(limitMs = 30_000) {
      assert.ok(killed && restartedAt > 0, 'restartKilled() first')
      const rejoining = killed
      await waitUntil(`the restarted node on ${rejoining.port} replicated ${master.port}`, limitMs, () => replicates(rejoining.port, master.port), outputs)
      killed = undefined
      return performance.now() - restartedAt
    },
    stop,
  }
}
