import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { main } from '../../src/main.ts'
import { authenticatedAt, chatOverHttp, loginOverHttp, userMessagesAt } from '../helpers/http-clients.ts'
import { ownSqliteFiles, runTriadCommand, startTriadProcess } from '../helpers/triad-process.ts'

const ADMIN = { AUTHN_ADMIN_EMAIL: 'ops@example.org', AUTHN_ADMIN_PASSWORD: 'correct horse battery' }
// Chat turns as fast as the mock model answers, and no rate limit: the load is the point.
const SERVER_ENV = { ...ADMIN, TRIAD_SERVICES: 'authn,avatar', AVATAR_MOCK_TOKEN_DELAY: '0s', AVATAR_RATE_LIMIT: '0', LOG_LEVEL: 'warn' }

async function run(argv: string[], env: Record<string, string>) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, { out: (text) => out.push(text), err: (text) => err.push(text) }, env)
  return { code, out: out.join('\n'), err: err.join('\n') }
}

interface Write {
  sessionId: string
  text: string
  /** performance.now() when the 2xx arrived; undefined when the write failed or was never answered. */
  acknowledged?: number
}

// Generous timeouts: each test starts Triad processes and commands, which took minutes on a
// machine shared with several full test runs; on a quiet one the whole file takes about a minute.
describe('triad backup and restore (SQLite)', { timeout: 900_000, skip: ownSqliteFiles }, () => {
  it('backs up while Triad takes writes, and a Triad started on the restore has every write acknowledged before the backup began', { timeout: 480_000 }, async (t) => {
    const server = await startTriadProcess(t, SERVER_ENV)
    const liveEnv = { DATABASE_URL: `sqlite:${join(server.dir, 't.sqlite')}`, TRIAD_SECRETS_FILE: join(server.dir, 'secrets.json') }
    const login = await loginOverHttp(server.base, ADMIN.AUTHN_ADMIN_EMAIL, ADMIN.AUTHN_ADMIN_PASSWORD)

    // Four writers, each a chat turn into a session of its own (one row set per acknowledged write).
    const writes: Write[] = []
    let writing = true
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let index = 0; writing; index++) {
        const write: Write = { sessionId: `w${writer}-${index}`, text: `write ${writer}/${index}` }
        writes.push(write)
        const response = await chatOverHttp(server.base, write.sessionId, write.text).catch(() => undefined)
        if (response && response.status >= 200 && response.status < 300) write.acknowledged = performance.now()
      }
    })
    // Enough acknowledged writes to check (however busy the machine), then the backup while writes go on.
    for (let waited = 0; writes.filter((write) => write.acknowledged !== undefined).length < 20 && waited < 60_000; waited += 100) await sleep(100)

    const backups = mkdtempSync(join(tmpdir(), 'triad-backups-'))
    const file = join(backups, 'triad.sqlite')
    const secrets = join(mkdtempSync(join(tmpdir(), 'triad-secrets-')), 'secrets.json')
    const started = performance.now()
    const backup = await runTriadCommand(['backup', file, '--secrets', secrets], liveEnv)
    const finished = performance.now()
    await sleep(300)
    writing = false
    await Promise.all(writers)
    assert.equal(backup.code, 0, backup.stderr)
    assert.match(backup.stdout, /backed up .* \(authn, avatar\) to /)
    assert.match(backup.stdout, /copied the secrets file \(\d+ keys\)/)
    assert.equal(statSync(secrets).mode & 0o777, 0o600)

    const before = writes.filter((write) => write.acknowledged !== undefined && write.acknowledged < started)
    const during = writes.filter((write) => write.acknowledged !== undefined && write.acknowledged >= started && write.acknowledged <= finished)
    assert.ok(before.length >= 10, `writes before the backup: ${before.length}`)
    assert.ok(during.length > 0, 'the server kept taking writes while the backup ran')
    server.child.kill('SIGTERM')

    // A fresh data directory, restored, and a new Triad on it.
    const fresh = mkdtempSync(join(tmpdir(), 'triad-restored-'))
    const freshEnv = { DATABASE_URL: `sqlite:${join(fresh, 'data', 't.sqlite')}`, TRIAD_SECRETS_FILE: join(fresh, 'data', 'secrets.json') }
    const restore = await runTriadCommand(['restore', file, '--secrets', secrets], freshEnv)
    assert.equal(restore.code, 0, restore.stderr)
    assert.match(restore.stdout, /restored .* \(authn, avatar\) to /)
    assert.match(restore.stdout, /restored the secrets to .*: \d+ keys added/)
    const restored = await startTriadProcess(t, { ...SERVER_ENV, ...freshEnv })

    const missing: string[] = []
    for (const write of before) {
      const messages = await userMessagesAt(restored.base, write.sessionId)
      if (!messages?.includes(write.text)) missing.push(write.sessionId)
    }
    assert.deepEqual(missing, [], `acknowledged before the backup but not restored (${before.length} checked)`)
    // The login token was signed before the backup: it verifies against the restored secrets.
    assert.equal(await authenticatedAt(restored.base, login.token), true)
  })

  it('refuses to restore over a database in use, or over one with data unless --force', { timeout: 360_000 }, async (t) => {
    const server = await startTriadProcess(t, SERVER_ENV)
    const env = { DATABASE_URL: `sqlite:${join(server.dir, 't.sqlite')}`, TRIAD_SECRETS_FILE: join(server.dir, 'secrets.json') }
    assert.equal((await chatOverHttp(server.base, 'kept', 'before')).status, 200)
    const file = join(mkdtempSync(join(tmpdir(), 'triad-backups-')), 'b.sqlite')
    const backup = await run(['backup', file], env)
    assert.equal(backup.code, 0, backup.err)
    // Without --secrets it says what is left out and what to do.
    assert.match(backup.out, /Not in this backup: the secrets file .*secrets\.json \(\d+ keys\)/)

    const again = await run(['backup', file], env)
    assert.equal(again.code, 1)
    assert.match(again.err, /exists; pass --force/)

    const live = await run(['restore', file, '--force'], env)
    assert.equal(live.code, 1)
    assert.match(live.err, /is in use .*stop every instance first/)

    assert.equal((await chatOverHttp(server.base, 'later', 'after the backup')).status, 200)
    server.child.kill('SIGTERM')
    await new Promise((resolve) => server.child.once('close', resolve))

    const occupied = await run(['restore', file], env)
    assert.equal(occupied.code, 1)
    assert.match(occupied.err, /already holds a database; pass --force/)

    const forced = await run(['restore', file, '--force'], env)
    assert.equal(forced.code, 0, forced.err)
    assert.match(forced.out, /replacing the database that was there/)
    assert.match(forced.out, /Kept the secrets file/)
    const back = await startTriadProcess(t, { ...SERVER_ENV, ...env })
    assert.deepEqual(await userMessagesAt(back.base, 'kept'), ['before'])
    assert.equal(await userMessagesAt(back.base, 'later'), undefined, 'the database is the backup, not what came after')
  })

  it('refuses what is not a Triad backup, and says what to do when no secrets come with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'triad-restore-'))
    const env = { DATABASE_URL: `sqlite:${join(dir, 'data', 't.sqlite')}`, TRIAD_SECRETS_FILE: join(dir, 'data', 'secrets.json') }
    const junk = join(dir, 'junk.sqlite')
    writeFileSync(junk, 'not a database at all, just text that is long enough to look like a file header')
    const refused = await run(['restore', junk], env)
    assert.equal(refused.code, 1)
    assert.match(refused.err, /triad restore: /)
    assert.equal(existsSync(join(dir, 'data', 't.sqlite')), false, 'nothing was put in place')

    const missing = await run(['restore', join(dir, 'nowhere.sqlite')], env)
    assert.equal(missing.code, 1)
    assert.match(missing.err, /there is no backup at/)

    const noSecrets = await run(['restore', junk, '--secrets', join(dir, 'none.json')], env)
    assert.equal(noSecrets.code, 1)
    assert.match(noSecrets.err, /there is no secrets file at/)

    const usage = await run(['backup'], env)
    assert.equal(usage.code, 2)
    const memory = await run(['backup', join(dir, 'x.sqlite')], { DATABASE_URL: 'sqlite::memory:' })
    assert.equal(memory.code, 1)
    assert.match(memory.err, /nothing to back up/)
  })

  it('prints the pg_dump and pg_restore commands for PostgreSQL, without the password', async () => {
    const env = { DATABASE_URL: 'postgres://triad:s3cret-pw@db.internal:5432/triad?sslmode=require' }
    const backup = await run(['backup', '/backups/triad 1.dump'], env)
    assert.equal(backup.code, 0, backup.err)
    assert.ok(!backup.out.includes('s3cret-pw'), 'the password is never printed')
    assert.match(backup.out, /^pg_dump --format=custom --no-owner --no-privileges --file='\/backups\/triad 1\.dump' --dbname='postgres:\/\/triad@db\.internal:5432\/triad\?sslmode=require'$/m)
    assert.match(backup.out, /PGPASSWORD or ~\/\.pgpass/)
    const restore = await run(['restore', '/backups/triad 1.dump'], env)
    assert.equal(restore.code, 0, restore.err)
    assert.ok(!restore.out.includes('s3cret-pw'))
    assert.match(
      restore.out,
      /^pg_restore --clean --if-exists --no-owner --no-privileges --single-transaction --exit-on-error --dbname='postgres:\/\/triad@db\.internal:5432\/triad\?sslmode=require' '\/backups\/triad 1\.dump'$/m,
    )
  })
})
