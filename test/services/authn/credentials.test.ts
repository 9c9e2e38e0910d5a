import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCommand } from '../../../src/core/cli/command.ts'
import { authnService } from '../../../src/services/authn/app.ts'
import { serviceBaseOf, type TestApp } from '../../helpers/build-app.ts'
import { ADMIN_EMAIL, addEperson, loggedIn, startAuthn, statusOf } from './helpers.ts'

/** `triad authn …` over the test app's database, as the operator runs it. */
async function cli(test_: TestApp, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const group = authnService.commands?.({ withService: (work) => work({ ...serviceBaseOf(test_), config: test_.config.authn }) })
  assert.ok(group)
  const code = await runCommand(group, argv, { out: (text) => out.push(text), err: (text) => err.push(text) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

test('triad authn sessions list|revoke: the operator sees and ends one device of an eperson, audited as operator', async (t) => {
  const test_ = await startAuthn(t)
  await addEperson(test_, 'user@example.org')
  const first = await loggedIn(test_.app, 'user@example.org')
  const second = await loggedIn(test_.app, 'user@example.org')
  const listed = await cli(test_, 'sessions', 'list', '--email', 'user@example.org', '--json')
  assert.equal(listed.code, 0, listed.err)
  const sessions = JSON.parse(listed.out) as Array<{ id: string; method: string }>
  assert.equal(sessions.length, 2)
  assert.ok(sessions.every((item) => item.method === 'password'))

  const firstSid = (await first.request('GET', 'authn/sessions')).json()._embedded.sessions.find((item: { current: boolean }) => item.current).id
  const revoked = await cli(test_, 'sessions', 'revoke', firstSid)
  assert.equal(revoked.code, 0, revoked.err)
  assert.equal(revoked.out, `revoked session ${firstSid}`)
  const audit = JSON.parse(revoked.err)
  assert.deepEqual([audit.audit, audit.actor, audit.target], ['session.revoke', 'operator', firstSid])
  test_.clock.advance(1_000)
  assert.equal((await statusOf(test_.app, first.token)).body.authenticated, false)
  assert.equal((await statusOf(test_.app, second.token)).body.authenticated, true)

  assert.equal((await cli(test_, 'sessions', 'revoke', firstSid)).code, 1)
  const unknown = await cli(test_, 'sessions', 'list', '--email', 'nobody@example.org')
  assert.equal(unknown.code, 1)
  assert.match(unknown.err, /No eperson with e-mail nobody@example.org/)
  assert.equal((await cli(test_, 'sessions', 'list')).code, 2)
})

test('triad authn tokens create|list|revoke: a token for an integration, printed once, refused once revoked', async (t) => {
  const test_ = await startAuthn(t)
  const created = await cli(test_, 'tokens', 'create', '--email', ADMIN_EMAIL, '--name', 'harvester', '--expires', '90d', '--scope', 'full', '--json')
  assert.equal(created.code, 0, created.err)
  const token = JSON.parse(created.out)
  assert.equal(token.expiresAt, '2026-04-01T00:00:00.000Z')
  assert.deepEqual(token.scopes, ['full'])
  assert.equal((await statusOf(test_.app, token.token)).body.authenticationMethod, 'token')

  const listed = await cli(test_, 'tokens', 'list', '--email', ADMIN_EMAIL)
  assert.equal(listed.code, 0)
  assert.match(listed.out, new RegExp(`^${token.id}  triad_pat_…${token.token.slice(-4)}  full  harvester  expires 2026-04-01T00:00:00.000Z$`))
  assert.ok(!listed.out.includes(token.token))

  assert.equal((await cli(test_, 'tokens', 'revoke', token.id)).code, 0)
  test_.clock.advance(1_000)
  const refused = await test_.app.inject({ method: 'GET', url: '/api/authn/status', headers: { authorization: `Bearer ${token.token}` } })
  assert.equal(refused.statusCode, 401)

  for (const bad of [
    ['--scope', 'write'],
    ['--expires', 'soon'],
  ]) {
    const misuse = await cli(test_, 'tokens', 'create', '--email', ADMIN_EMAIL, '--name', 'x', '--expires', '1d', ...bad)
    assert.equal(misuse.code, 2, bad.join(' '))
  }
  const tooLong = await cli(test_, 'tokens', 'create', '--email', ADMIN_EMAIL, '--name', 'x', '--expires', '400d')
  assert.equal(tooLong.code, 1)
  assert.match(tooLong.err, /at most 366 days/)
})

test('triad authn passkeys list|remove: nothing to list, and an unknown passkey is an error', async (t) => {
  const test_ = await startAuthn(t)
  const listed = await cli(test_, 'passkeys', 'list', '--email', ADMIN_EMAIL)
  assert.deepEqual([listed.code, listed.out], [0, 'no passkeys'])
  const removed = await cli(test_, 'passkeys', 'remove', 'AAAA')
  assert.equal(removed.code, 1)
  assert.match(removed.err, /No passkey AAAA/)
})

test('the OpenAPI document describes the session, personal access token and passkey routes', async (t) => {
  const { app } = await startAuthn(t, { AUTHN_PASSKEY_RP_ID: 'repo.example.org' })
  const paths = (await app.inject({ method: 'GET', url: '/docs/json' })).json().paths
  const expected: Record<string, string[]> = {
    '/api/authn/sessions': ['get'],
    '/api/authn/sessions/{id}': ['get', 'delete'],
    '/api/authn/tokens': ['get', 'post'],
    '/api/authn/tokens/{id}': ['get', 'delete'],
    '/api/authn/passkeys': ['get', 'post'],
    '/api/authn/passkeys/{id}': ['delete'],
    '/api/authn/passkeys/registration/options': ['post'],
    '/api/authn/passkeys/login/options': ['post'],
    '/api/authn/passkeys/login': ['post'],
  }
  for (const [path, methods] of Object.entries(expected)) {
    for (const prefix of ['', '/server']) {
      for (const method of methods) {
        const operation = paths[`${prefix}${path}`]?.[method]
        assert.ok(operation, `${method} ${prefix}${path} documented`)
        assert.deepEqual(operation.tags, ['authn'])
        assert.ok(operation.summary)
        assert.ok(operation.responses['401'] || path.startsWith('/api/authn/passkeys/login'), `${method} ${path} documents its 401`)
      }
    }
  }
})
