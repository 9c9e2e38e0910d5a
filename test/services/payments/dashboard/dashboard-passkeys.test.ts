import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, test } from 'node:test'
import { basic, createApp, createMerchant, type PaymentsTestApp, paymentsApp } from '../helpers.ts'
import { inviteUser, userSession } from './sign-in-links.ts'

// Merchant users' passkeys (issue 30): the refusals, through inject. The ceremonies themselves
// run in Chromium with a virtual authenticator (dashboard-passkeys.browser.test.ts).
const shared: PaymentsTestApp = await paymentsApp({ after })

const b64 = (value: string) => Buffer.from(value).toString('base64url')

/** An assertion of the right shape that no authenticator made, for `challenge`. */
function forgedAssertion(challenge: string, id = b64('no such credential')) {
  return {
    id,
    rawId: id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64(JSON.stringify({ type: 'webauthn.get', challenge, origin: 'http://localhost:80' })),
      authenticatorData: b64('x'.repeat(37)),
      signature: b64('not a signature'),
    },
  }
}

async function fresh() {
  const owner = await createApp(shared.app, 'Owner')
  const merchant = await createMerchant(shared.app, owner.key)
  const email = `dee.${owner.id.toLowerCase()}@shop.example`
  const userId = await inviteUser(shared.app, owner.key, merchant.id, email)
  return { owner, merchant, email, userId, ...(await userSession(shared.app, shared.db, email)) }
}

/**
 * A stored passkey of the user, as a finished registration leaves it (the ceremony itself needs
 * an authenticator: the browser test runs it). Answers its id.
 */
async function storedPasskey(userId: string, name: string, created: string, lastUsed: string | null = null): Promise<string> {
  const id = randomBytes(16).toString('base64url')
  await shared.db
    .insertInto('payments_dashboard_passkeys')
    .values({ id, user_id: userId, name, public_key: b64('not a key'), counter: 3, transports: '["internal"]', created, last_used: lastUsed })
    .execute()
  return id
}

const passkeyIdsOf = async (userId: string) =>
  (await shared.db.selectFrom('payments_dashboard_passkeys').select('id').where('user_id', '=', userId).orderBy('id').execute()).map((row) => row.id)

test('registering a passkey needs a merchant user\'s session and its CSRF token; the options name the user and this host', async () => {
  const { owner, email, cookie, csrfToken } = await fresh()
  const url = '/dashboard/passkeys/registration/options'
  const byKey = await shared.app.inject({ method: 'POST', url, headers: { authorization: basic(owner.key) } })
  assert.equal(byKey.statusCode, 403, 'an app has no passkeys')
  assert.equal((await shared.app.inject({ method: 'POST', url })).statusCode, 401)
  assert.equal((await shared.app.inject({ method: 'POST', url, headers: { cookie } })).statusCode, 403, 'no CSRF token')
  const options = await shared.app.inject({ method: 'POST', url, headers: { cookie, 'x-csrf-token': csrfToken } })
  assert.equal(options.statusCode, 200, options.body)
  const body = options.json()
  assert.equal(body.rp.id, 'localhost')
  assert.equal(body.user.name, email)
  assert.equal(body.authenticatorSelection.userVerification, 'required')

  // An answer to a challenge this server never gave (or gave and saw used) is refused.
  const credential = { ...forgedAssertion('unknown'), response: { clientDataJSON: b64(JSON.stringify({ challenge: 'unknown' })), attestationObject: b64('x') } }
  const unknown = await shared.app.inject({ method: 'POST', url: '/dashboard/passkeys', headers: { cookie, 'x-csrf-token': csrfToken }, payload: { credential } })
  assert.equal(unknown.statusCode, 400, unknown.body)
  assert.deepEqual(unknown.json(), [{ field: 'credential', message: 'answers an unknown, used or expired passkey challenge: ask for new registration options' }])
})

test('signing in with a passkey that is not one answers 401 with no cookie; a challenge works once; other sites and hosts are refused', async () => {
  const options = await shared.app.inject({ method: 'POST', url: '/dashboard/passkeys/login/options' })
  assert.equal(options.statusCode, 200, options.body)
  const { challenge, rpId } = options.json()
  assert.equal(rpId, 'localhost')
  const forged = await shared.app.inject({ method: 'POST', url: '/dashboard/session/passkey', payload: { credential: forgedAssertion(challenge) } })
  assert.equal(forged.statusCode, 401)
  assert.equal(forged.json().code, 'unauthorized')
  assert.equal(forged.headers['set-cookie'], undefined)
  const replayed = await shared.app.inject({ method: 'POST', url: '/dashboard/session/passkey', payload: { credential: forgedAssertion(challenge) } })
  assert.equal(replayed.statusCode, 401)

  const malformed = await shared.app.inject({ method: 'POST', url: '/dashboard/session/passkey', payload: { credential: { id: 'x' } } })
  assert.equal(malformed.statusCode, 400)
  const crossSite = await shared.app.inject({ method: 'POST', url: '/dashboard/passkeys/login/options', headers: { 'sec-fetch-site': 'cross-site' } })
  assert.equal(crossSite.statusCode, 403)
  const elsewhere = await shared.app.inject({ method: 'POST', url: '/dashboard/passkeys/login/options', headers: { host: 'evil.example' } })
  assert.equal(elsewhere.statusCode, 503)
})

test("a merchant user lists their own passkeys (name, added, last used), never another user's; an app or a signed-out browser cannot", async () => {
  const dee = await fresh()
  const other = await fresh()
  const laptop = await storedPasskey(dee.userId, 'Laptop', '2026-01-02T10:00:00.000Z', '2026-01-05T08:30:00.000Z')
  const phone = await storedPasskey(dee.userId, 'Phone', '2026-01-03T10:00:00.000Z')
  await storedPasskey(other.userId, 'Not yours', '2026-01-01T10:00:00.000Z')

  const listed = await shared.app.inject({ url: '/dashboard/passkeys', headers: { cookie: dee.cookie } })
  assert.equal(listed.statusCode, 200, listed.body)
  assert.equal(listed.headers['cache-control'], 'no-store')
  assert.deepEqual(listed.json(), {
    passkeys: [
      { id: laptop, name: 'Laptop', created: '2026-01-02T10:00:00.000Z', lastUsed: '2026-01-05T08:30:00.000Z' },
      { id: phone, name: 'Phone', created: '2026-01-03T10:00:00.000Z' },
    ],
  })

  const byKey = await shared.app.inject({ url: '/dashboard/passkeys', headers: { authorization: basic(dee.owner.key) } })
  assert.equal(byKey.statusCode, 403, 'an app has no passkeys')
  assert.equal(byKey.json().code, 'forbidden')
  assert.equal((await shared.app.inject({ url: '/dashboard/passkeys' })).statusCode, 401)
})

test("a merchant user removes their own passkey with the CSRF token from this site; another user's, an unknown or a removed one is a 404", async () => {
  const dee = await fresh()
  const other = await fresh()
  const mine = await storedPasskey(dee.userId, 'Laptop', '2026-01-02T10:00:00.000Z')
  const kept = await storedPasskey(dee.userId, 'Phone', '2026-01-03T10:00:00.000Z')
  const theirs = await storedPasskey(other.userId, 'Theirs', '2026-01-02T10:00:00.000Z')
  const remove = (id: string, headers: Record<string, string>) => shared.app.inject({ method: 'DELETE', url: `/dashboard/passkeys/${id}`, headers })
  const withCsrf = { cookie: dee.cookie, 'x-csrf-token': dee.csrfToken }

  // The refusals leave every passkey in place.
  const noCsrf = await remove(mine, { cookie: dee.cookie })
  assert.equal(noCsrf.statusCode, 403)
  assert.match(noCsrf.json().message, /CSRF/)
  const crossSite = await remove(mine, { ...withCsrf, 'sec-fetch-site': 'cross-site' })
  assert.equal(crossSite.statusCode, 403)
  assert.deepEqual(crossSite.json(), { code: 'forbidden', message: 'Use the dashboard page of this site: requests from other sites are refused' })
  assert.equal((await remove(mine, { ...withCsrf, origin: 'https://evil.example' })).statusCode, 403)
  assert.equal((await remove(mine, { authorization: basic(dee.owner.key) })).statusCode, 403, 'an app has no passkeys')
  assert.equal((await remove(mine, {})).statusCode, 401)
  const another = await remove(theirs, withCsrf)
  assert.equal(another.statusCode, 404, "another user's passkey is as unknown as a missing one")
  assert.deepEqual(another.json(), { code: 'not_found', message: 'Passkey not found' })
  assert.deepEqual((await remove(b64('no such passkey'), withCsrf)).json(), another.json())
  assert.equal((await remove('not%20base64url', withCsrf)).statusCode, 400)
  assert.deepEqual(await passkeyIdsOf(dee.userId), [mine, kept].sort())
  assert.deepEqual(await passkeyIdsOf(other.userId), [theirs])

  const removed = await remove(mine, { ...withCsrf, host: 'localhost', origin: 'http://localhost', 'sec-fetch-site': 'same-origin' })
  assert.equal(removed.statusCode, 204, removed.body)
  assert.deepEqual(await passkeyIdsOf(dee.userId), [kept])
  assert.equal((await remove(mine, withCsrf)).statusCode, 404, 'removed once')
  const listed = await shared.app.inject({ url: '/dashboard/passkeys', headers: { cookie: dee.cookie } })
  assert.deepEqual(listed.json().passkeys.map((passkey: { id: string }) => passkey.id), [kept])
  // The other user removes their own with their own session.
  assert.equal((await remove(theirs, { cookie: other.cookie, 'x-csrf-token': other.csrfToken })).statusCode, 204)
  assert.deepEqual(await passkeyIdsOf(other.userId), [])
})

test('a removed passkey signs nobody in: the sign-in with it is the same 401 as an unknown one', async () => {
  const dee = await fresh()
  const id = await storedPasskey(dee.userId, 'Laptop', '2026-01-02T10:00:00.000Z')
  assert.equal((await shared.app.inject({ method: 'DELETE', url: `/dashboard/passkeys/${id}`, headers: { cookie: dee.cookie, 'x-csrf-token': dee.csrfToken } })).statusCode, 204)
  const { challenge } = (await shared.app.inject({ method: 'POST', url: '/dashboard/passkeys/login/options' })).json()
  const signIn = await shared.app.inject({ method: 'POST', url: '/dashboard/session/passkey', payload: { credential: forgedAssertion(challenge, id) } })
  assert.equal(signIn.statusCode, 401)
  assert.equal(signIn.headers['set-cookie'], undefined)
})
