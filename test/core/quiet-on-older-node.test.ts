import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../helpers/free-port.ts'

// What a user with only an older Node (Debian's 20 here) sees from npm and the CLI: nothing on
// stderr. The shell they would type in: PATH without any node_modules/.bin (npm puts the
// bundled Node 24 first there) and none of the npm_* variables `npm test` passes down.

const root = new URL('../..', import.meta.url).pathname

/** This environment as a fresh shell would have it. */
function shellEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !dir.includes('node_modules'))
    .join(delimiter)
  return { ...env, ...extra }
}

/** The `node` a fresh shell finds, when it is older than 24 (else the warnings cannot arise). */
function olderSystemNode(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v node'], { env: shellEnvironment(), encoding: 'utf8' }).stdout.trim()
  if (!found) return undefined
  const major = Number(spawnSync(found, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim())
  return major < 24 ? found : undefined
}

const systemNode = olderSystemNode()

/** Lines a user would read as warnings (npm's `npm warn …`, Node's `(node:…) Warning: …`). */
function warnings(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /warn/i.test(line))
}

/**
 * Runs an npm command as on a fresh machine: with an npm cache of its own (npx installs the
 * project into its cache on first use, which is when it checks engines).
 */
function run(t: TestContext, command: string, args: string[], options: { cwd?: string } = {}) {
  const cache = mkdtempSync(join(tmpdir(), 'triad-npm-cache-'))
  t.after(() => rmSync(cache, { recursive: true, force: true }))
  return spawnSync(command, args, { cwd: options.cwd ?? root, env: shellEnvironment({ npm_config_cache: cache }), encoding: 'utf8', timeout: 120_000 })
}

describe('under a Node older than 24, npm and the CLI print no warning', { skip: !systemNode && 'the Node on PATH outside node_modules is 24 or later' }, () => {
  it('npx triad --help, the first time (an empty npm cache): the commands on stdout, nothing on stderr', (t) => {
    const result = run(t, 'npx', ['--offline', '--no-install', 'triad', '--help'])
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /serve/)
    assert.deepEqual(warnings(result.stderr), [])
    assert.equal(result.stderr, '')
  })

  it('node bin/triad.js --help with that Node (the launcher starts the bundled one): nothing on stderr', (t) => {
    const result = run(t, systemNode ?? 'node', ['bin/triad.js', '--help'])
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /serve/)
    assert.equal(result.stderr, '')
  })

  it('npm ci (its checks, on a copy of the manifest, lockfile and .npmrc): no EBADENGINE, nothing on stderr', (t) => {
    const copy = mkdtempSync(join(tmpdir(), 'triad-npm-ci-'))
    t.after(() => rmSync(copy, { recursive: true, force: true }))
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(join(root, file), join(copy, file))
    // --dry-run builds the tree from the lockfile and checks every package's engines, as
    // `npm ci` does, without installing (this suite runs on the installed node_modules).
    const result = run(t, 'npm', ['ci', '--dry-run', '--offline', '--no-audit', '--no-fund'], { cwd: copy })
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /added \d+ packages/)
    assert.deepEqual(warnings(result.stderr), [])
    assert.equal(result.stderr, '')
    // The check is real: without the project's .npmrc the same run warns.
    rmSync(join(copy, '.npmrc'))
    assert.match(run(t, 'npm', ['ci', '--dry-run', '--offline', '--no-audit', '--no-fund'], { cwd: copy }).stderr, /EBADENGINE/)
  })

  it('npm start: serves, stops on SIGTERM, and writes nothing to stderr', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'triad-npm-start-'))
    const port = await freePort()
    const child = spawn('npm', ['start', '--', '--port', String(port)], {
      cwd: root,
      env: shellEnvironment({ DATABASE_URL: `sqlite:${join(dir, 't.sqlite')}`, TRIAD_SECRETS_FILE: join(dir, 'secrets.json'), TRIAD_SERVICES: 'avatar', LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let stderr = ''
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    t.after(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {}
      rmSync(dir, { recursive: true, force: true })
    })
    const deadline = performance.now() + 120_000
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.ok, () => false)
      if (ready) break
      assert.ok(performance.now() < deadline && child.exitCode === null, `npm start did not serve: ${stdout.slice(-300)} ${stderr.slice(-300)}`)
      await sleep(100)
    }
    const closed = once(child, 'close')
    process.kill(-(child.pid ?? 0), 'SIGTERM')
    await closed
    assert.deepEqual(warnings(stderr), [])
    assert.equal(stderr, '')
    assert.ok(existsSync(join(dir, 't.sqlite')), 'it served from the database it was given')
  })
})
