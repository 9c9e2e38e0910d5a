import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { ChangeEntry } from '../../../../src/services/authn/modules/audit/index.ts'
import type { TriadClient } from '../../../../clients/typescript/index.ts'
import { typedClient } from '../../../helpers/typed-client.ts'
import { ADMIN_EMAIL, addEperson, authnServices, startAuthn, statusOf, typedLoggedIn } from '../helpers.ts'

// The token routes are called through the typed client (clients/typescript), as a script would.

const IN_30_DAYS = '2026-01-31T00:00:00.000Z'

type TokenRequest = { name: string; expiresAt: string; scopes: Array<'read' | 'full'> }

/** POST /api/authn/tokens; `body` may be wrong on purpose (the bad-request test), hence its loose type. */
async function createToken(client: TriadClient, body: Record<string, unknown> = {}) {
  return client.POST('/api/authn/tokens', { body: { name: 'nightly export', expiresAt: IN_30_DAYS, scopes: ['read'], ...body } as TokenRequest })
}

/** The token a successful POST answered. */
async function createdToken(client: TriadClient, body: Record<string, unknown> = {}) {
  const { data, response } = await createToken(client, body)
  assert.ok(data, `token created: ${response.status}`)
  return data
}

function bearer(token: string) {
  return { authorization: `Bearer ${token}` }
}

const tokenRoute = (client: TriadClient, id: string) => ({
  get: () => client.GET('/api/authn/tokens/{id}', { params: { path: { id } } }),
  revoke: () => client.DELETE('/api/authn/tokens/{id}', { params: { path: { id } } }),
})

test('a personal access token is shown once, stored as its SHA-256, and authenticates a script as its owner', async (t) => {
  const entries: ChangeEntry[] = []
  const test_ = await startAuthn(t, {}, { deps: { authn: { auditLog: { change: (entry) => entries.push(entry) } } } })
  const { app, database } = test_
  const client = await typedLoggedIn(app, ADMIN_EMAIL)
  const created = await createToken(client)
  assert.equal(created.response.status, 201)
  assert.equal(created.response.headers.get('cache-control'), 'no-store')
  const body = created.data
  assert.ok(body)
  assert.match(body.token, /^triad_pat_[A-Za-z0-9_-]{43}$/)
  assert.match(body.id, /^pat_[0-9a-f]{24}$/)
  assert.deepEqual(
    { name: body.name, scopes: body.scopes, expiresAt: body.expiresAt, lastUsedAt: body.lastUsedAt, revokedAt: body.revokedAt, type: body.type },
    { name: 'nightly export', scopes: ['read'], expiresAt: IN_30_DAYS, lastUsedAt: null, revokedAt: null, type: 'personalaccesstoken' },
  )
  assert.equal(body.tokenHint, `triad_pat_…${body.token.slice(-4)}`)
  assert.ok(String(created.response.headers.get('location')).endsWith(`/api/authn/tokens/${body.id}`))

  const stored = await sql<{ token_hash: string }>`select token_hash from authn_personal_tokens`.execute(database.db)
  assert.equal(stored.rows.length, 1)
  assert.match(stored.rows[0]?.token_hash ?? '', /^[0-9a-f]{64}$/)
  assert.ok(!JSON.stringify(stored.rows).includes(body.token.slice(10)))

  const status = await statusOf(app, body.token)
  assert.equal(status.body.authenticated, true)
  assert.equal(status.body.authenticationMethod, 'token')
  assert.equal((status.body._embedded?.eperson as { email: string }).email, ADMIN_EMAIL)
  // Never the secret again.
  const listed = (await client.GET('/api/authn/tokens')).data
  assert.equal(listed?._embedded?.personalaccesstokens.length, 1)
  assert.equal((listed?._embedded?.personalaccesstokens[0] as Record<string, unknown>).token, undefined)
  assert.equal(((await tokenRoute(client, body.id).get()).data as Record<string, unknown>).token, undefined)
  assert.deepEqual(
    entries.map((entry) => [entry.action, entry.target]),
    [['token.create', body.id]],
  )
})

test('scope read allows GET and HEAD only; scope full writes too, without a CSRF pair (the header cannot be forged cross-site)', async (t) => {
  const { app } = await startAuthn(t)
  const client = await typedLoggedIn(app, ADMIN_EMAIL)
  const read = (await createdToken(client)).token
  const full = await createdToken(client, { scopes: ['read', 'full'] })
  assert.deepEqual(full.scopes, ['full'])
  const newEperson = (email: string) => JSON.stringify({ email, password: 'another good password' })

  const refused = await app.inject({ method: 'POST', url: '/api/eperson/epersons', headers: { ...bearer(read), 'content-type': 'application/json' }, payload: newEperson('a@example.org') })
  assert.equal(refused.statusCode, 403)
  assert.equal(refused.json().message, 'This personal access token is read-only (scope read): it may only be used for GET and HEAD requests')
  assert.equal((await app.inject({ method: 'HEAD', url: '/api/authn/status', headers: bearer(read) })).statusCode, 200)

  const made = await app.inject({ method: 'POST', url: '/api/eperson/epersons', headers: { ...bearer(full.token), 'content-type': 'application/json' }, payload: newEperson('b@example.org') })
  assert.equal(made.statusCode, 201, made.body)
  // A login token still needs the CSRF pair.
  const withLogin = await typedClient(app, bearer(client.session.token ?? '')).POST('/api/eperson/epersons', { body: { email: 'c@example.org', password: 'another good password' } })
  assert.equal(withLogin.response.status, 403)
})

test('a personal access token never creates tokens, refreshes, manages credentials, changes a password or acts on behalf of someone', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true' })
  const { app } = test_
  const user = await addEperson(test_, 'user@example.org')
  const client = await typedLoggedIn(app, ADMIN_EMAIL)
  const full = await createdToken(client, { scopes: ['full'] })
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
  assert.equal((await statusOf(app, client.session.token ?? '')).body.authenticated, true)
})

test('after expiry, revocation or for an unknown token: 401 in the DSpace error body, saying which', async (t) => {
  const test_ = await startAuthn(t)
  const { app, clock } = test_
  const client = await typedLoggedIn(app, ADMIN_EMAIL)
  const soon = await createdToken(client, { expiresAt: '2026-01-01T01:00:00.000Z' })
  const later = await createdToken(client)
  assert.equal((await statusOf(app, soon.token)).body.authenticated, true)

  assert.equal((await tokenRoute(client, later.id).revoke()).response.status, 204)
  const revoked = await typedClient(app, bearer(later.token)).GET('/api/authn/status')
  assert.equal(revoked.response.status, 401)
  const refusal = revoked.error as Record<string, unknown>
  assert.equal(refusal.message, `This personal access token was revoked at 2026-01-01T00:00:00.000Z`)
  assert.equal(revoked.response.headers.get('www-authenticate'), 'Bearer error="invalid_token"')
  assert.deepEqual(Object.keys(refusal).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
  assert.equal((await tokenRoute(client, later.id).get()).data?.revokedAt, '2026-01-01T00:00:00.000Z')
  assert.equal((await tokenRoute(client, later.id).revoke()).response.status, 204, 'revoking again changes nothing')

  clock.advance(3_600_000)
  const expired = await app.inject({ method: 'GET', url: '/api/eperson/epersons/00000000-0000-4000-8000-000000000000', headers: bearer(soon.token) })
  assert.equal(expired.statusCode, 401)
  assert.equal(expired.json().message, 'This personal access token expired at 2026-01-01T01:00:00.000Z')

  const unknown = await app.inject({ method: 'GET', url: '/api/authn/status', headers: bearer(`triad_pat_${'A'.repeat(43)}`) })
  assert.equal(unknown.statusCode, 401)
  assert.equal(unknown.json().message, 'Invalid personal access token')

  // A disabled account's tokens stop too.
  const user = await addEperson(test_, 'user@example.org')
  const userClient = await typedLoggedIn(app, 'user@example.org')
  const userToken = (await createdToken(userClient, { expiresAt: '2026-02-01T00:00:00.000Z' })).token
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
  const client = await typedLoggedIn(app, ADMIN_EMAIL)
  const user = await typedLoggedIn(app, 'user@example.org')
  for (const expiresAt of ['2025-12-31T00:00:00.000Z', '2027-01-03T00:00:00.000Z', 'next tuesday']) {
    const { response, error } = await createToken(client, { expiresAt })
    assert.equal(response.status, 422, expiresAt)
    assert.equal((error as Record<string, unknown>).message, 'expiresAt must be a date-time in the future, at most 366 days from now')
  }
  assert.equal((await createToken(client, { scopes: ['write'] })).response.status, 400)
  assert.equal((await createToken(client, { scopes: [] })).response.status, 400)
  assert.equal((await createToken(client, { name: undefined })).response.status, 400)
  assert.equal((await createToken(client, { name: '   ' })).response.status, 422)
  const anonymous = await typedClient(app).GET('/api/authn/tokens')
  assert.equal(anonymous.response.status, 401)

  const mine = await createdToken(client)
  assert.equal((await tokenRoute(user, mine.id).get()).response.status, 404)
  assert.equal((await tokenRoute(user, mine.id).revoke()).response.status, 404)
  assert.equal((await statusOf(app, mine.token)).body.authenticated, true)
  assert.equal((await tokenRoute(user, 'pat_nothex').get()).response.status, 400)
})

test('last used is recorded, at most once a minute', async (t) => {
  const { app, clock } = await startAuthn(t)
  const client = await typedLoggedIn(app, ADMIN_EMAIL)
  const token = await createdToken(client)
  const lastUsed = async () => (await tokenRoute(client, token.id).get()).data?.lastUsedAt
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
