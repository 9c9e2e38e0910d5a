import assert from 'node:assert/strict'
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { type Cleanup, testDialect } from './build-app.ts'
import { freePort } from './free-port.ts'

const triad = new URL('../../bin/triad.js', import.meta.url).pathname

/**
 * `skip` for a test whose databases are SQLite files of its own (startTriadProcess's default, a
 * backup file): on the suite's PostgreSQL pass it would only repeat what its SQLite pass ran.
 */
export const ownSqliteFiles: string | false =
  testDialect === 'postgres' ? 'runs on SQLite files of its own, not the test database: the SQLite pass of the suite covers it' : false

export interface TriadProcess {
  base: string
  /** The process's own temporary directory (its SQLite file `t.sqlite` and `secrets.json`, unless `env` named others). */
  dir: string
  child: ChildProcessByStdio<null, Readable, Readable>
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
}

/**
 * A real `triad serve` through `bin/triad.js`, as an operator starts it (with `options.node`, or
 * this test's Node; `detached` puts it in a process group of its own, as a shell job is), on a
 * fresh SQLite file and a free port; returns once `/readyz` answers 200 (`/healthz` answers while migrations still run). Killed when the test ends.
 */
export async function startTriadProcess(
  t: Cleanup,
  env: Record<string, string> = {},
  options: { node?: string; detached?: boolean; cwd?: string; port?: number } = {},
): Promise<TriadProcess> {
  const port = options.port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'triad-process-'))
  const child = spawn(options.node ?? process.execPath, [triad, 'serve', '--port', String(port)], {
    // Speech threads on first use, as in testConfig: a warm-up is seconds of CPU per process.
    env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 't.sqlite')}`, TRIAD_SECRETS_FILE: join(dir, 'secrets.json'), AVATAR_TTS_WARM: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached,
    cwd: options.cwd,
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  const base = `http://127.0.0.1:${port}`
  // Two minutes: on a CPU shared with full test runs, starting (migrations included) took over
  // one (tests that start several processes give themselves the time).
  const deadline = performance.now() + 120_000
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break
    } catch {}
    assert.ok(performance.now() < deadline && child.exitCode === null, `triad serve did not start: ${output.slice(-500)}`)
    await sleep(100)
  }
  return { base, dir, child, output: () => output }
}

/**
 * Runs a `triad` command (`bin/triad.js`, this test's Node) as its own process, without blocking
 * this one (requests the test keeps making go on meanwhile); answers its exit code and output.
 */
export async function runTriadCommand(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [triad, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}
