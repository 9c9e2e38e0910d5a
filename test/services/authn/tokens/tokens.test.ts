import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { ChangeEntry } from '../../../../src/services/authn/modules/audit/index.ts'
import { ADMIN_EMAIL, addEperson, authnServices, type BrowserClient, loggedIn, startAuthn, statusOf } from '../helpers.ts'

const IN_30_DAYS = '2026-01-31T00:00:00.000Z'

async function createToken(client: BrowserClient, body: Record<string, unknown> = {}) {
  return client.request('POST', 'authn/tokens', { json: { name: 'nightly export', expiresAt: IN_30_DAYS, scopes: ['read'], ...body } })
}

function bearer(token: string) {
  return { authorization: `Bearer ${token}` }
}

test('a personal access token is shown once, stored as its SHA-256, and authenticates a script as its owner', async (t) => {
  const entries: ChangeEntry[] = []
  const test_ = await startAuthn(t, {}, { deps: { authn: { auditLog: { change: (entry) => entries.push(entry) } } } })
  const { app, database } = test_
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const created = await createToken(client)
  assert.equal(created.statusCode, 201, created.body)
  assert.equal(created.headers['cache-control'], 'no-store')
  const body = created.json()
  assert.match(body.token, /^triad_pat_[A-Za-z0-9_-]{43}$/)
  assert.match(body.id, /^pat_[0-9a-f]{24}$/)
  assert.deepEqual(
    { name: body.name, scopes: body.scopes, expiresAt: body.expiresAt, lastUsedAt: body.lastUsedAt, revokedAt: body.revokedAt, type: body.type },
    { name: 'nightly export', scopes: ['read'], expiresAt: IN_30_DAYS, lastUsedAt: null, revokedAt: null, type: 'personalaccesstoken' },
  )
  assert.equal(body.tokenHint, `triad_pat_…${body.token.slice(-4)}`)
  assert.ok(String(created.headers.location).endsWith(`/api/authn/tokens/${body.id}`))

  const stored = await sql<{ token_hash: string }>`select token_hash from authn_personal_tokens`.execute(database.db)
  assert.equal(stored.rows.length, 1)
  assert.match(stored.rows[0]?.token_hash ?? '', /^[0-9a-f]{64}$/)
  assert.ok(!JSON.stringify(stored.rows).includes(body.token.slice(10)))

  const status = await statusOf(app, body.token)
  assert.equal(status.body.authenticated, true)
  assert.equal(status.body.authenticationMethod, 'token')
  assert.equal((status.body._embedded?.eperson as { email: string }).email, ADMIN_EMAIL)
  // Never the secret again.
  const listed = await client.request('GET', 'authn/tokens')
  assert.equal(listed.json()._embedded.personalaccesstokens.length, 1)
  assert.equal(listed.json()._embedded.personalaccesstokens[0].token, undefined)
  assert.equal((await client.request('GET', `authn/tokens/${body.id}`)).json().token, undefined)
  assert.deepEqual(
    entries.map((entry) => [entry.action, entry.target]),
    [['token.create', body.id]],
  )
})

test('scope read allows GET and HEAD only; scope full writes too, without a CSRF pair (the header cannot be forged cross-site)', async (t) => {
  const { app } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const read = (await createToken(client)).json().token as string
  const full = (await createToken(client, { scopes: ['read', 'full'] })).json()
  assert.deepEqual(full.scopes, ['full'])
  const newEperson = (email: string) => JSON.stringify({ email, password: 'another good password' })

  const refused = await app.inject({ method: 'POST', url: '/api/eperson/epersons', headers: { ...bearer(read), 'content-type': 'application/json' }, payload: newEperson('a@example.org') })
  assert.equal(refused.statusCode, 403)
  assert.equal(refused.json().message, 'This personal access token is read-only (scope read): it may only be used for GET and HEAD requests')
  assert.equal((await app.inject({ method: 'HEAD', url: '/api/authn/status', headers: bearer(read) })).statusCode, 200)

  const made = await app.inject({ method: 'POST', url: '/api/eperson/epersons', headers: { ...bearer(full.token), 'content-type': 'application/json' }, payload: newEperson('b@example.org') })
  assert.equal(made.statusCode, 201, made.body)
  // A login token still needs the CSRF pair.
  const withLogin = await app.inject({ method: 'POST', url: '/api/eperson/epersons', headers: { ...bearer(client.token ?? ''), 'content-type': 'application/json' }, payload: newEperson('c@example.org') })
  assert.equal(withLogin.statusCode, 403)
})

test('a personal access token never creates tokens, refreshes, manages credentials, changes a password or acts on behalf of someone', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true' })
  const { app } = test_
  const user = await addEperson(test_, 'user@example.org')
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const full = (await createToken(client, { scopes: ['full'] })).json()
  const headers = bearer(full.token)
  const me = (await statusOf(app, full.token)).body._embedded?.eperson as { uuid: string }

  const attempts = [
    { method: 'POST', url: '/api/authn/tokens', payload: JSON.stringify({ name: 'x', expiresAt: IN_30_DAYS, scopes: ['full'] }) },
    { method: 'GET', url: '/api/authn/tokens' },
    { method: 'DELETE', url: `/api/authn/tokens/${full.id}` },
    { method: 'GET', url: '/api/authn/sessions' },
    { method: 'POST', url: '/api/authn/shortlivedtokens' },
    { method: 'POST', url: '/api/authn/login' },
    { method: 'PATCH', url: `/api/eperson/epersons/${me.uuid}`, payload: JSON.stringify([{ op: 'replace', path: '/password', value: 'a brand new password' }]) },
  ] as const
  for (const attempt of attempts) {
    const response = await app.inject({ ...attempt, headers: 'payload' in attempt ? { ...headers, 'content-type': 'application/json' } : headers })
    assert.equal(response.statusCode, 403, `${attempt.method} ${attempt.url}: ${response.body}`)
    assert.match(response.json().message, /personal access token/)
  }
  const onBehalf = await app.inject({ method: 'GET', url: '/api/authn/status', headers: { ...headers, 'x-on-behalf-of': user.uuid } })
  assert.equal(onBehalf.statusCode, 403)
  assert.equal(onBehalf.json().message, 'A personal access token cannot act on behalf of another user')
  // Logout answers 204 as always, and ends nothing: the token and the login still work.
  assert.equal((await app.inject({ method: 'POST', url: '/api/authn/logout', headers })).statusCode, 204)
  assert.equal((await statusOf(app, full.token)).body.authenticated, true)
  assert.equal((await statusOf(app, client.token)).body.authenticated, true)
})

test('after expiry, revocation or for an unknown token: 401 in the DSpace error body, saying which', async (t) => {
  const test_ = await startAuthn(t)
  const { app, clock } = test_
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const soon = (await createToken(client, { expiresAt: '2026-01-01T01:00:00.000Z' })).json()
  const later = (await createToken(client)).json()
  assert.equal((await statusOf(app, soon.token)).body.authenticated, true)

  assert.equal((await client.request('DELETE', `authn/tokens/${later.id}`)).statusCode, 204)
  const revoked = await app.inject({ method: 'GET', url: '/api/authn/status', headers: bearer(later.token) })
  assert.equal(revoked.statusCode, 401)
  assert.equal(revoked.json().message, `This personal access token was revoked at 2026-01-01T00:00:00.000Z`)
  assert.equal(revoked.headers['www-authenticate'], 'Bearer error="invalid_token"')
  assert.deepEqual(Object.keys(revoked.json()).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
  assert.equal((await client.request('GET', `authn/tokens/${later.id}`)).json().revokedAt, '2026-01-01T00:00:00.000Z')
  assert.equal((await client.request('DELETE', `authn/tokens/${later.id}`)).statusCode, 204, 'revoking again changes nothing')

  clock.advance(3_600_000)
  const expired = await app.inject({ method: 'GET', url: '/api/eperson/epersons/00000000-0000-4000-8000-000000000000', headers: bearer(soon.token) })
  assert.equal(expired.statusCode, 401)
  assert.equal(expired.json().message, 'This personal access token expired at 2026-01-01T01:00:00.000Z')

  const unknown = await app.inject({ method: 'GET', url: '/api/authn/status', headers: bearer(`triad_pat_${'A'.repeat(43)}`) })
  assert.equal(unknown.statusCode, 401)
  assert.equal(unknown.json().message, 'Invalid personal access token')

  // A disabled account's tokens stop too.
  const user = await addEperson(test_, 'user@example.org')
  const userClient = await loggedIn(app, 'user@example.org', undefined, '/api')
  const userToken = (await createToken(userClient, { expiresAt: '2026-02-01T00:00:00.000Z' })).json().token as string
  const { epersons } = await authnServices(test_)
  await epersons.setCanLogIn(user.uuid, false)
  clock.advance(2_000)
  const disabled = await app.inject({ method: 'GET', url: '/api/authn/status', headers: bearer(userToken) })
  assert.equal(disabled.statusCode, 401)
  assert.equal(disabled.json().message, 'The account of this personal access token cannot log in')
})

test('bad requests: an expiry in the past or over a year away 422, an unknown scope or missing name 400; another user’s token 404', async (t) => {
  const test_ = await startAuthn(t)
  const { app } = test_
  await addEperson(test_, 'user@example.org')
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const user = await loggedIn(app, 'user@example.org', undefined, '/api')
  for (const expiresAt of ['2025-12-31T00:00:00.000Z', '2027-01-03T00:00:00.000Z', 'next tuesday']) {
    const response = await createToken(client, { expiresAt })
    assert.equal(response.statusCode, 422, expiresAt)
    assert.equal(response.json().message, 'expiresAt must be a date-time in the future, at most 366 days from now')
  }
  assert.equal((await createToken(client, { scopes: ['write'] })).statusCode, 400)
  assert.equal((await createToken(client, { scopes: [] })).statusCode, 400)
  assert.equal((await createToken(client, { name: undefined })).statusCode, 400)
  assert.equal((await createToken(client, { name: '   ' })).statusCode, 422)
  const anonymous = await app.inject({ method: 'GET', url: '/api/authn/tokens' })
  assert.equal(anonymous.statusCode, 401)

  const mine = (await createToken(client)).json()
  assert.equal((await user.request('GET', `authn/tokens/${mine.id}`)).statusCode, 404)
  assert.equal((await user.request('DELETE', `authn/tokens/${mine.id}`)).statusCode, 404)
  assert.equal((await statusOf(app, mine.token)).body.authenticated, true)
  assert.equal((await user.request('GET', 'authn/tokens/pat_nothex')).statusCode, 400)
})

test('last used is recorded, at most once a minute', async (t) => {
  const { app, clock } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const token = (await createToken(client)).json()
  const lastUsed = async () => (await client.request('GET', `authn/tokens/${token.id}`)).json().lastUsedAt
  await statusOf(app, token.token)
  assert.equal(await lastUsed(), '2026-01-01T00:00:00.000Z')
  clock.advance(59_000)
  await statusOf(app, token.token)
  await statusOf(app, token.token)
  assert.equal(await lastUsed(), '2026-01-01T00:00:00.000Z')
  clock.advance(1_000)
  await statusOf(app, token.token)
  assert.equal(await lastUsed(), '2026-01-01T00:01:00.000Z')
})
