import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

const triad = new URL('../../bin/triad.js', import.meta.url).pathname

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  return port
}

/** Starts `triad serve` and returns the command line of the process that answers, read from /proc. */
async function servingCommandLine(t: TestContext, env: Record<string, string>): Promise<string[]> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'triad-launcher-'))
  const child = spawn(process.execPath, [triad, 'serve', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 't.sqlite')}`, LOG_LEVEL: 'warn', TRIAD_SERVICES: 'avatar', ...env },
    stdio: 'ignore',
  })
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break
    } catch {}
    assert.ok(attempt < 200 && child.exitCode === null, 'triad serve did not start')
    await sleep(100)
  }
  // The pid the launcher was started as is the pid that serves (execve, not a child process).
  return readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')
}

describe('bin/triad.js serve', { skip: !existsSync('/proc/self/cmdline') && 'needs /proc' }, () => {
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
