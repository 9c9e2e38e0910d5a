import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { freePort } from './free-port.ts'
import { hasCommand } from './has-command.ts'

export interface PrivateRedis {
  port: number
  url: string
  stop(): Promise<void>
}

const running = new Set<ChildProcess>()
let exitHookInstalled = false

/**
 * A redis-server of the test's own on a free port of 127.0.0.1, persisting nothing, so a test
 * can cut it off without disturbing the Redis other tests share. Killed by `stop()`, and when
 * the test process exits (a server left behind would hold its port).
 */
export async function startRedisServer(): Promise<PrivateRedis> {
  assert.ok(hasCommand('redis-server'), 'redis-server is needed (apt-get install redis-server)')
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.once('exit', () => running.forEach((left) => left.kill('SIGKILL')))
  }
  running.add(child)
  child.once('exit', () => running.delete(child))
  let output = ''
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2000))
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }

  const deadline = performance.now() + 10_000
  for (;;) {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    const answered = await client
      .connect()
      .then(() => client.ping())
      .catch(() => undefined)
      .finally(() => client.disconnect())
    if (answered === 'PONG') return { port, url: `redis://127.0.0.1:${port}`, stop }
    if (performance.now() > deadline || child.exitCode !== null) {
      await stop()
      assert.fail(`redis-server on ${port} did not answer: ${output}`)
    }
    await sleep(50)
  }
}
