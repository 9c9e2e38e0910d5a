import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { main } from '../../../../src/main.ts'
import { type Cleanup, createTestSchemaUrl, testDialect } from '../../../helpers/build-app.ts'

/** A DATABASE_URL of its own for the CLI: a temp SQLite file, or a fresh PostgreSQL schema. */
async function cliDatabaseUrl(t: Cleanup): Promise<string> {
  if (testDialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'authn-cli-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    return `sqlite:${join(dir, 'triad.sqlite')}`
  }
  return createTestSchemaUrl(t, 'test_cli')
}

function cli(databaseUrl: string) {
  // A secrets file of its own, never the working directory's ./data/secrets.json.
  const secretsDir = mkdtempSync(join(tmpdir(), 'authn-cli-secrets-'))
  return async (...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await main(
      ['authn', ...argv],
      { out: (text) => out.push(text), err: (text) => err.push(text) },
      { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', TRIAD_SECRETS_FILE: join(secretsDir, 'secrets.json') },
    )
    return { code, out: out.join('\n'), err: err.join('\n') }
  }
}

test('triad authn eperson/group commands manage accounts and report errors with a non-zero exit', async (t) => {
  const run = cli(await cliDatabaseUrl(t))

  const added = await run(
    'eperson',
    'add',
    '--email',
    'Ada@Example.org',
    '--password',
    'long enough pw',
    '--admin',
    '--first',
    'Ada',
    '--last',
    'Lovelace',
    '--json',
  )
  assert.equal(added.code, 0, added.err)
  const ada = JSON.parse(added.out)
  assert.equal(ada.email, 'ada@example.org')
  assert.equal(ada.admin, true)
  assert.equal(ada.firstName, 'Ada')

  const human = await run('eperson', 'add', '--email', 'bob@example.org', '--password', 'long enough pw')
  assert.equal(human.code, 0)
  assert.match(human.out, /created eperson bob@example\.org/)

  const duplicate = await run('eperson', 'add', '--email', 'BOB@example.org', '--password', 'long enough pw')
  assert.equal(duplicate.code, 1)
  assert.match(duplicate.err, /already exists/)

  const weak = await run('eperson', 'add', '--email', 'carol@example.org', '--password', 'short')
  assert.equal(weak.code, 1)
  assert.match(weak.err, /between 8 and 1024/)

  const missing = await run('eperson', 'add', '--email', 'dan@example.org')
  assert.equal(missing.code, 2)
  assert.match(missing.err, /--password is required/)

  const listed = await run('eperson', 'list', '--json')
  assert.equal(listed.code, 0)
  assert.deepEqual(
    JSON.parse(listed.out).map((item: { email: string; admin: boolean }) => [item.email, item.admin]),
    [
      ['ada@example.org', true],
      ['bob@example.org', false],
    ],
  )

  assert.equal((await run('eperson', 'disable', '--email', 'bob@example.org')).code, 0)
  const afterDisable = JSON.parse((await run('eperson', 'list', '--json')).out)
  assert.equal(afterDisable[1].canLogIn, false)
  assert.match((await run('eperson', 'list')).out, /bob@example\.org {2}\(disabled\)/)
  assert.equal((await run('eperson', 'enable', '--email', 'bob@example.org', '--json')).code, 0)

  const setPassword = await run('eperson', 'set-password', '--email', 'bob@example.org', '--password', 'another long one', '--json')
  assert.equal(setPassword.code, 0)
  assert.equal(JSON.parse(setPassword.out).passwordChanged, true)
  const unknown = await run('eperson', 'set-password', '--email', 'nobody@example.org', '--password', 'another long one')
  assert.equal(unknown.code, 1)
  assert.match(unknown.err, /No eperson with e-mail nobody@example\.org/)

  const group = await run('group', 'add', 'Reviewers', '--json')
  assert.equal(group.code, 0)
  assert.equal(JSON.parse(group.out).created, true)
  assert.match((await run('group', 'add', 'Reviewers')).out, /already exists/)
  const member = await run('group', 'add-member', 'Reviewers', 'BOB@example.org', '--json')
  assert.equal(member.code, 0)
  assert.equal(JSON.parse(member.out).added, true)
  assert.match((await run('group', 'add-member', 'Reviewers', 'bob@example.org')).out, /already in Reviewers/)
  const noGroup = await run('group', 'add-member', 'Nope', 'bob@example.org')
  assert.equal(noGroup.code, 1)
  assert.match(noGroup.err, /No group named Nope/)
  assert.equal((await run('group', 'add-member', 'Reviewers')).code, 2)
})
