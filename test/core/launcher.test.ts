import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ownSqliteFiles, startTriadProcess } from '../helpers/triad-process.ts'

/** A Node older than 24 on this machine (Debian's), which makes the launcher start the bundled one. */
function olderNode(): string | undefined {
  const node = '/usr/bin/node'
  if (!existsSync(node)) return undefined
  const major = Number(spawnSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim())
  return major < 24 ? node : undefined
}

/** The command line of the process that serves, read from /proc. */
async function servingCommandLine(t: TestContext, env: Record<string, string>): Promise<string[]> {
  const { child } = await startTriadProcess(t, { LOG_LEVEL: 'warn', TRIAD_SERVICES: 'avatar', ...env })
  // The pid the launcher was started as is the pid that serves (execve, not a child process).
  return readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')
}

describe('bin/triad.js serve', { skip: ownSqliteFiles || (!existsSync('/proc/self/cmdline') && 'needs /proc') }, () => {
  it('caps the young generation at 16 MB semi-spaces, in the same process', async (t) => {
    const args = await servingCommandLine(t, { NODE_OPTIONS: '' })
    assert.ok(args.includes('--max-semi-space-size=16'), args.join(' '))
    assert.ok(args.includes('serve'))
  })

  it("keeps the operator's own size from NODE_OPTIONS", async (t) => {
    const args = await servingCommandLine(t, { NODE_OPTIONS: '--max-semi-space-size=8' })
    assert.ok(!args.some((arg) => arg.startsWith('--max-semi-space-size')), args.join(' '))
  })
})

describe('bin/triad.js under a Node older than 24', { skip: ownSqliteFiles || (!olderNode() && 'no Node < 24 at /usr/bin/node') }, () => {
  it('passes SIGTERM on to the bundled Node it started, and exits with it', async (t) => {
    const { base, child, output } = await startTriadProcess(t, { LOG_LEVEL: 'info', TRIAD_SERVICES: 'avatar' }, { node: olderNode() })
    const [serving] = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ').map(Number)
    assert.ok(serving > 0, 'the launcher has a child: the bundled Node')
    t.after(() => {
      if (existsSync(`/proc/${serving}`)) process.kill(serving, 'SIGKILL')
    })
    child.kill('SIGTERM')
    // An orphaned server would keep the pipes open, and 'close' would never come.
    const closed = await Promise.race([once(child, 'close'), sleep(15_000).then(() => 'timed out' as const)])
    assert.notEqual(closed, 'timed out', 'the launcher and its server ended within 15 s')
    assert.equal(closed[0], 0)
    assert.match(output(), /shutting down/, 'the server itself got the signal')
    assert.ok(!existsSync(`/proc/${serving}`) || readFileSync(`/proc/${serving}/stat`, 'utf8').split(') ')[1].startsWith('Z'), 'no server left running')
    await assert.rejects(fetch(`${base}/healthz`))
  })

  it('lets a Ctrl-C to the whole process group reach the server once: a graceful stop, exit code 0', async (t) => {
    const { child, output } = await startTriadProcess(t, { LOG_LEVEL: 'info', TRIAD_SERVICES: 'avatar' }, { node: olderNode(), detached: true })
    const pid = child.pid ?? 0
    t.after(() => {
      try {
        process.kill(-pid, 'SIGKILL')
      } catch {}
    })
    // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group. A server
    // in the launcher's group would get it twice (directly and forwarded) and exit at once, 1.
    process.kill(-pid, 'SIGINT')
    const closed = await Promise.race([once(child, 'close'), sleep(15_000).then(() => 'timed out' as const)])
    assert.notEqual(closed, 'timed out', 'the launcher and its server ended within 15 s')
    assert.equal(closed[0], 0, output())
    assert.match(output(), /shutting down/)
    assert.doesNotMatch(output(), /second SIGINT/)
  })
})

