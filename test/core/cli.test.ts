import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import packageJson from '../../package.json' with { type: 'json' }
import { main } from '../../src/main.ts'
import { ownSqliteFiles } from '../helpers/triad-process.ts'

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, { out: (text) => out.push(text), err: (text) => err.push(text) }, env)
  return { code, out: out.join('\n'), err: err.join('\n') }
}

describe('triad command line', { skip: ownSqliteFiles }, () => {
  it('lists its commands with --help and exits 0', async () => {
    const result = await run(['--help'])
    assert.equal(result.code, 0)
    assert.match(result.out, /Usage: triad <command>/)
    assert.match(result.out, /serve/)
    assert.match(result.out, /migrate/)
  })

  it('prints usage for a command with --help', async () => {
    for (const command of ['serve', 'migrate']) {
      const result = await run([command, '--help'])
      assert.equal(result.code, 0)
      assert.match(result.out, new RegExp(`Usage: triad ${command}`))
    }
  })

  it('refuses an unknown command with exit code 2 and a pointer to --help', async () => {
    const result = await run(['frobnicate'])
    assert.equal(result.code, 2)
    assert.match(result.err, /unknown command "frobnicate"/)
    assert.match(result.err, /triad --help/)
  })

  it('refuses an unknown option and a bad --only list with exit code 2', async () => {
    const unknownOption = await run(['migrate', '--bogus'])
    assert.equal(unknownOption.code, 2)
    assert.match(unknownOption.err, /Usage: triad migrate/)
    const badOnly = await run(['migrate', '--only', 'billing'], { DATABASE_URL: 'sqlite::memory:' })
    assert.equal(badOnly.code, 2)
    assert.match(badOnly.err, /--only takes a comma-separated list of authn, avatar, payments \(got "billing"\)/)
  })

  it('migrates a database, and again without change', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'triad-cli-')), 'db.sqlite')
    const env = { DATABASE_URL: `sqlite:${file}` }
    const first = await run(['migrate'], env)
    assert.equal(first.code, 0, first.err)
    assert.match(first.out, /migrated authn, avatar, payments on sqlite/)
    const second = await run(['migrate', '--only', 'payments'], env)
    assert.equal(second.code, 0, second.err)
  })

  it('runs as the bin package.json declares (`npx triad`) under the Node 24 that npm installed', () => {
    const [command] = Object.keys(packageJson.bin)
    const result = spawnSync('npx', ['--no-install', command, '--help'], { encoding: 'utf8', timeout: 60_000, cwd: new URL('../..', import.meta.url).pathname })
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /Usage: triad <command>/)
  })
})
