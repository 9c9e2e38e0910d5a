import assert from 'node:assert/strict'
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
  await inviteUser(shared.app, owner.key, merchant.id, email)
  return { owner, merchant, email, ...(await userSession(shared.app, shared.db, email)) }
}

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
