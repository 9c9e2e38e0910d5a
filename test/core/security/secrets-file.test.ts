import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createManualClock } from '../../../src/core/clock.ts'
import { createSecrets, keyIdOf, type KeyringOptions } from '../../../src/core/security/keyring.ts'
import { openSecretsFile } from '../../../src/core/security/secrets-file.ts'
import { unsuppliedSecretsWarning } from '../../../src/core/security/secrets.ts'

const freshPath = () => join(mkdtempSync(join(tmpdir(), 'triad-secrets-')), 'nested', 'secrets.json')
let counter = 0
const ring = (supplied: string[] = []): KeyringOptions => ({
  name: 'svc.key',
  envVar: 'SVC_KEY',
  supplied,
  generate: () => `generated-secret-${process.pid}-${++counter}-${Math.random()}`,
})

describe('the secrets file', () => {
  it('is created with mode 0600 in a directory of mode 0700, atomically (no temporary or lock file left)', async () => {
    const path = freshPath()
    const secrets = createSecrets(openSecretsFile(path), createManualClock())
    assert.deepEqual(await secrets.keyring(ring()).init(), { generated: true })
    assert.equal(statSync(path).mode & 0o777, 0o600)
    assert.equal(statSync(join(path, '..')).mode & 0o777, 0o700)
    assert.deepEqual(readdirSync(join(path, '..')), ['secrets.json'])
    const document = JSON.parse(readFileSync(path, 'utf8'))
    assert.equal(document.format, 'triad-secrets/1')
    assert.equal(document.secrets['svc.key'].length, 1)
  })

  it('ends with the same secret when two processes start together on a fresh file', async () => {
    const path = freshPath()
    const starts = Array.from({ length: 4 }, () => createSecrets(openSecretsFile(path), createManualClock()).keyring(ring()))
    const results = await Promise.all(starts.map((keyring) => keyring.init()))
    assert.equal(results.filter((result) => result.generated).length, 1, 'one of them generated it')
    const actives = await Promise.all(starts.map(async (keyring) => (await keyring.current()).active.id))
    assert.equal(new Set(actives).size, 1)
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).secrets['svc.key'].length, 1)
  })

  it('lets a supplied (environment) key take precedence and generates nothing then', async () => {
    const path = freshPath()
    const keyring = createSecrets(openSecretsFile(path), createManualClock()).keyring(ring(['from-the-environment-0123456789abcdef']))
    assert.deepEqual(await keyring.init(), { generated: false })
    const set = await keyring.current()
    assert.equal(set.active.source, 'environment')
    assert.equal(set.active.id, keyIdOf('from-the-environment-0123456789abcdef'))
    assert.equal(keyring.supplied(), true)
    assert.throws(() => statSync(path), /ENOENT/, 'no file written')
  })

  it('counts a generated key as supplied only in a file the operator named', async () => {
    const clock = createManualClock()
    const defaulted = createSecrets(openSecretsFile(freshPath()), clock)
    await defaulted.keyring(ring()).init()
    assert.deepEqual(defaulted.unsupplied(), [{ name: 'svc.key', envVar: 'SVC_KEY' }])
    assert.match(unsuppliedSecretsWarning(defaulted, { production: true, secretsFile: 'x' }) ?? '', /SVC_KEY is not supplied.*TRIAD_SECRETS_FILE/)
    assert.equal(unsuppliedSecretsWarning(defaulted, { production: false, secretsFile: 'x' }), undefined)
    const chosen = createSecrets(openSecretsFile(freshPath(), { chosen: true }), clock)
    await chosen.keyring(ring()).init()
    assert.deepEqual(chosen.unsupplied(), [])
  })

  it('shows another process\'s rotation after the check interval, or at once on refresh', async () => {
    const path = freshPath()
    const clock = createManualClock()
    const server = createSecrets(openSecretsFile(path), clock).keyring(ring())
    await server.init()
    const first = (await server.current()).active.id
    const operator = createSecrets(openSecretsFile(path), clock).keyring(ring())
    const added = await operator.rotate()
    assert.equal((await server.current()).active.id, first, 'not checked yet')
    clock.advance(5_000)
    const after = await server.current()
    assert.equal(after.active.id, added.id)
    assert.ok(after.find(first), 'the old key still opens what it sealed')
    await operator.retire([first])
    assert.ok(!(await server.refresh()).find(first))
  })

  it('refuses a file that is not a secrets file, naming it', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'triad-secrets-')), 'secrets.json')
    writeFileSync(path, '{"hello": 1}')
    await assert.rejects(createSecrets(openSecretsFile(path), createManualClock()).keyring(ring()).init(), new RegExp(`${path} is not a Triad secrets file`))
  })
})
