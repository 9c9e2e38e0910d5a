import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChangeEntry } from '../../../../src/services/authn/modules/audit/index.ts'
import { summariseUserAgent } from '../../../../src/services/authn/modules/sessions/device.ts'
import { createTestDatabase } from '../../../helpers/build-app.ts'
import { ADMIN_EMAIL, addEperson, BrowserClient, loggedIn, startAuthn, statusOf } from '../helpers.ts'

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0'
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1'

interface SessionItem {
  id: string
  method: string
  device: string | null
  ip: string | null
  createdAt: string
  lastSeenAt: string
  current: boolean
}

async function loginFrom(app: BrowserClient['app'], email: string, userAgent: string): Promise<BrowserClient> {
  const client = new BrowserClient(app, '/api')
  await client.request('GET', 'security/csrf')
  const response = await client.request('POST', 'authn/login', { form: { user: email, password: 'correct horse battery' }, auth: false, headers: { 'user-agent': userAgent } })
  assert.equal(response.statusCode, 200, response.body)
  return client
}

async function sessionsOf(client: BrowserClient, query = ''): Promise<SessionItem[]> {
  const response = await client.request('GET', `authn/sessions${query}`)
  assert.equal(response.statusCode, 200, response.body)
  return response.json()._embedded.sessions
}

test('each login is a session with its device, address, method and times; the list marks the current one', async (t) => {
  const { app, clock } = await startAuthn(t)
  const laptop = await loginFrom(app, ADMIN_EMAIL, FIREFOX)
  clock.advance(1_000)
  const phone = await loginFrom(app, ADMIN_EMAIL, SAFARI_IPHONE)

  const seenFromLaptop = await sessionsOf(laptop)
  assert.equal(seenFromLaptop.length, 2)
  // The newest first.
  assert.deepEqual(
    seenFromLaptop.map((item) => [item.device, item.method, item.ip, item.current]),
    [
      ['Safari 17 on iOS', 'password', '127.0.0.1', false],
      ['Firefox 132 on Windows', 'password', '127.0.0.1', true],
    ],
  )
  assert.equal(seenFromLaptop[1]?.createdAt, '2026-01-01T00:00:00.000Z')
  assert.deepEqual(
    (await sessionsOf(phone)).map((item) => item.current),
    [true, false],
  )
  const one = await laptop.request('GET', `authn/sessions/${seenFromLaptop[0]?.id}`)
  assert.equal(one.statusCode, 200)
  assert.equal(one.json().device, 'Safari 17 on iOS')
  // Paging as DSpace does it.
  const page = await laptop.request('GET', 'authn/sessions?size=1&page=1')
  assert.deepEqual(page.json().page, { number: 1, size: 1, totalPages: 2, totalElements: 2 })
  assert.equal(page.json()._embedded.sessions[0].device, 'Firefox 132 on Windows')
})

test('revoking one session stops its tokens (short-lived ones too) at once; the other device stays logged in; logout still ends all', async (t) => {
  const entries: ChangeEntry[] = []
  const { app } = await startAuthn(t, {}, { deps: { authn: { auditLog: { change: (entry) => entries.push(entry) } } } })
  const laptop = await loginFrom(app, ADMIN_EMAIL, FIREFOX)
  const phone = await loginFrom(app, ADMIN_EMAIL, SAFARI_IPHONE)
  const shortLived = (await phone.request('POST', 'authn/shortlivedtokens')).json().token as string
  const phoneSession = (await sessionsOf(phone)).find((item) => item.current)
  assert.ok(phoneSession)

  const revoked = await laptop.request('DELETE', `authn/sessions/${phoneSession.id}`)
  assert.equal(revoked.statusCode, 204)
  assert.equal((await statusOf(app, phone.token)).body.authenticated, false)
  const download = await app.inject({ method: 'GET', url: `/api/authn/status?authentication-token=${shortLived}` })
  assert.equal(download.json().authenticated, false)
  assert.equal((await statusOf(app, laptop.token)).body.authenticated, true)
  assert.equal((await phone.request('POST', 'authn/login')).statusCode, 401, 'the revoked session cannot be refreshed')
  assert.deepEqual((await sessionsOf(laptop)).map((item) => item.device), ['Firefox 132 on Windows'])
  const adminUuid = (await statusOf(app, laptop.token)).body._embedded?.eperson as { uuid: string }
  assert.deepEqual(entries, [{ action: 'session.revoke', eperson: adminUuid.uuid, target: phoneSession.id, actor: adminUuid.uuid, actorEmail: ADMIN_EMAIL }])

  // Again: it is gone.
  const again = await laptop.request('DELETE', `authn/sessions/${phoneSession.id}`)
  assert.equal(again.statusCode, 404)
  assert.equal(again.json().message, `No session ${phoneSession.id}`)

  const tablet = await loginFrom(app, ADMIN_EMAIL, FIREFOX)
  assert.equal((await laptop.request('POST', 'authn/logout')).statusCode, 204)
  assert.equal((await statusOf(app, tablet.token)).body.authenticated, false)
  assert.equal((await statusOf(app, laptop.token)).body.authenticated, false)
})

test("someone else's session is a 404; an administrator lists and revokes anyone's; asking for another's list without being one is 403", async (t) => {
  const test_ = await startAuthn(t)
  const { app } = test_
  const user = await addEperson(test_, 'user@example.org')
  await addEperson(test_, 'other@example.org')
  const admin = await loggedIn(app, ADMIN_EMAIL, undefined, '/api')
  const alice = await loginFrom(app, 'user@example.org', FIREFOX)
  const bob = await loginFrom(app, 'other@example.org', SAFARI_IPHONE)
  const aliceSession = (await sessionsOf(alice))[0]
  assert.ok(aliceSession)

  const byBob = await bob.request('DELETE', `authn/sessions/${aliceSession.id}`)
  assert.equal(byBob.statusCode, 404)
  assert.deepEqual(Object.keys(byBob.json()).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
  assert.equal((await bob.request('GET', `authn/sessions/${aliceSession.id}`)).statusCode, 404)
  assert.equal((await bob.request('GET', `authn/sessions?eperson=${user.uuid}`)).statusCode, 403)
  assert.equal((await statusOf(app, alice.token)).body.authenticated, true)

  const listed = await sessionsOf(admin, `?eperson=${user.uuid}`)
  assert.deepEqual(listed.map((item) => [item.id, item.current]), [[aliceSession.id, false]])
  assert.equal((await admin.request('GET', 'authn/sessions?eperson=00000000-0000-4000-8000-000000000000')).statusCode, 404)
  assert.equal((await admin.request('DELETE', `authn/sessions/${aliceSession.id}`)).statusCode, 204)
  assert.equal((await statusOf(app, alice.token)).body.authenticated, false)
  assert.equal((await statusOf(app, bob.token)).body.authenticated, true)
})

test('the session routes need a login: anonymous 401 with WWW-Authenticate, a bad id 400, a missing CSRF token 403', async (t) => {
  const { app } = await startAuthn(t)
  const anonymous = await app.inject({ method: 'GET', url: '/api/authn/sessions' })
  assert.equal(anonymous.statusCode, 401)
  assert.equal(anonymous.headers['www-authenticate'], 'password realm="DSpace REST API"')
  const client = await loggedIn(app, ADMIN_EMAIL)
  assert.equal((await client.request('GET', 'authn/sessions/not-a-uuid')).statusCode, 400)
  assert.equal((await client.request('GET', 'authn/sessions?size=0')).statusCode, 400)
  const noCsrf = await app.inject({ method: 'DELETE', url: '/api/authn/sessions/00000000-0000-4000-8000-000000000000', headers: { authorization: `Bearer ${client.token}` } })
  assert.equal(noCsrf.statusCode, 403)
})

test('last seen is written at most once a minute per session, not on every request', async (t) => {
  const { app, clock } = await startAuthn(t)
  const client = await loginFrom(app, ADMIN_EMAIL, FIREFOX)
  const lastSeen = async () => (await sessionsOf(client))[0]?.lastSeenAt
  assert.equal(await lastSeen(), '2026-01-01T00:00:00.000Z')
  clock.advance(30_000)
  for (let i = 0; i < 3; i++) await statusOf(app, client.token)
  assert.equal(await lastSeen(), '2026-01-01T00:00:00.000Z', 'within the minute: no write')
  clock.advance(30_000)
  await statusOf(app, client.token)
  assert.equal(await lastSeen(), '2026-01-01T00:01:00.000Z')
  clock.advance(10_000)
  await statusOf(app, client.token)
  assert.equal(await lastSeen(), '2026-01-01T00:01:00.000Z')
})

test('a User-Agent is summarised as browser, major version and system', () => {
  const cases: Array<[string | undefined, string | null]> = [
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70', 'Edge 131 on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15', 'Safari 17 on macOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome 131 on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox 133 on Linux'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1', 'Chrome 131 on iOS'],
    ['curl/8.5.0', 'curl 8'],
    ['python-requests/2.32.3', 'Python requests 2'],
    ['DSpace-harvester/1.0 (+https://example.org)', 'DSpace-harvester'],
    ['', null],
    [undefined, null],
  ]
  for (const [userAgent, expected] of cases) assert.equal(summariseUserAgent(userAgent), expected, String(userAgent))
  assert.ok((summariseUserAgent('x'.repeat(1000)) ?? '').length <= 120)
})

test('a session revoked on one instance stops on another within AUTHN_REVOCATION_CACHE, as a logout does; the other session lives on', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '2s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '2s' }, { database, clock: a.clock })
  const laptop = await loggedIn(a.app, ADMIN_EMAIL)
  const phone = await loggedIn(b.app, ADMIN_EMAIL)
  for (const app of [a.app, b.app]) for (const token of [laptop.token, phone.token]) assert.equal((await statusOf(app, token)).body.authenticated, true)
  const phoneSession = (await phone.request('GET', 'authn/sessions')).json()._embedded.sessions.find((item: { current: boolean }) => item.current)

  // Revoked through instance A, the session's tokens stop on A at once…
  assert.equal((await laptop.request('DELETE', `authn/sessions/${phoneSession.id}`)).statusCode, 204)
  assert.equal((await statusOf(a.app, phone.token)).body.authenticated, false)
  // …and on B, which may still serve its cached row, no later than the configured bound.
  a.clock.advance(1_999)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, true)
  a.clock.advance(1)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, false)
  assert.equal((await statusOf(b.app, laptop.token)).body.authenticated, true)
})

test('with AUTHN_REVOCATION_CACHE=0s a session revoked on one instance is refused by the other on the very next request', async (t) => {
  const database = await createTestDatabase(t)
  const a = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '0s' }, { database })
  const b = await startAuthn(t, { AUTHN_REVOCATION_CACHE: '0s' }, { database, clock: a.clock })
  const laptop = await loggedIn(a.app, ADMIN_EMAIL)
  const phone = await loggedIn(b.app, ADMIN_EMAIL)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, true)
  const phoneSession = (await phone.request('GET', 'authn/sessions')).json()._embedded.sessions.find((item: { current: boolean }) => item.current)
  assert.equal((await laptop.request('DELETE', `authn/sessions/${phoneSession.id}`)).statusCode, 204)
  assert.equal((await statusOf(b.app, phone.token)).body.authenticated, false)
  assert.equal((await statusOf(b.app, laptop.token)).body.authenticated, true)
})
