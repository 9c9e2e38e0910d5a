import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { describe, it, type TestContext } from 'node:test'
import { startTriadProcess } from '../helpers/triad-process.ts'

/** The command line of the process that serves, read from /proc. */
async function servingCommandLine(t: TestContext, env: Record<string, string>): Promise<string[]> {
  const { child } = await startTriadProcess(t, { LOG_LEVEL: 'warn', TRIAD_SERVICES: 'avatar', ...env })
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
