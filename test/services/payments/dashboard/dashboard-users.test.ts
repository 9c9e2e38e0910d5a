import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { authorize, basic, createApp, createMerchant, type PaymentsTestApp, paymentsApp } from '../helpers.ts'
import { awaitSignInMail, inviteUser, signInMails } from './sign-in-links.ts'

// Merchant users sign in to the dashboard with an e-mailed one-time link (issue 30). One app
// (one database) for the file; each test makes its own app, merchant and users, and asks for
// links from an address of its own, so the per-address limit counts only its own requests.
const shared: PaymentsTestApp = await paymentsApp({ after })
const MINUTE = 60_000
let addresses = 0

async function fresh() {
  const test = shared
  const owner = await createApp(test.app, 'Owner')
  const merchant = await createMerchant(test.app, owner.key)
  const ip = `10.30.${Math.floor(addresses / 250)}.${(addresses++ % 250) + 1}`
  const email = `ana.${owner.id.toLowerCase()}@shop.example`
  const userId = await inviteUser(test.app, owner.key, merchant.id, email)
  const askForLink = (address: string, extra: { lang?: string; headers?: Record<string, string>; ip?: string } = {}) =>
    test.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in-link',
      remoteAddress: extra.ip ?? ip,
      headers: extra.headers,
      payload: { email: address, ...(extra.lang ? { lang: extra.lang } : {}) },
    })
  const follow = (token: string, headers: Record<string, string> = {}) => test.app.inject({ method: 'POST', url: '/dashboard/session/link', headers, payload: { token } })
  return { ...test, owner, merchant, ip, email, userId, askForLink, follow }
}

type Fixture = Awaited<ReturnType<typeof fresh>>

/** Asks for a link for the fixture's user and answers its token, from the outbox. */
async function linkToken(fixture: Fixture, count = 1): Promise<string> {
  const asked = await fixture.askForLink(fixture.email)
  assert.equal(asked.statusCode, 202, asked.body)
  return (await awaitSignInMail(fixture.db, fixture.email, count)).token
}

function sessionCookie(response: LightMyRequestResponse): string {
  const header = [response.headers['set-cookie']].flat().find((value) => value?.startsWith('triad_dashboard='))
  assert.ok(header, 'a session cookie is set')
  assert.match(header, /; HttpOnly/i)
  assert.match(header, /; SameSite=Strict/i)
  return header.split(';')[0]
}

/**
 * The parts of an answer that could say anything about the e-mail: status, body and headers,
 * without those that change with every request (the date, its id, the address's general rate count).
 */
function observable(response: LightMyRequestResponse) {
  const { date: _date, 'x-request-id': _id, 'x-ratelimit-remaining': _remaining, ...headers } = response.headers
  return { status: response.statusCode, body: response.body, headers }
}

test('an invited user asks for a link, follows it once and is signed in as themselves; their capture is theirs in the trail and the event', async () => {
  const fixture = await fresh()
  const asked = await fixture.askForLink(fixture.email.toUpperCase())
  assert.equal(asked.statusCode, 202, asked.body)
  assert.deepEqual(asked.json(), { linkLifetimeMinutes: 15 })
  assert.equal(asked.headers['set-cookie'], undefined)
  const { mail, link, token } = await awaitSignInMail(fixture.db, fixture.email)
  assert.equal(mail.subject, 'Your Triad Payments sign-in link')
  assert.match(mail.body, /expires in 15 minutes/)
  // Without PAYMENTS_PUBLIC_URL the link goes to the (loopback) host the request came to; the token is in the fragment.
  assert.equal(link, `http://localhost:80/dashboard?lang=en#sign-in=${token}`)
  const [stored] = await fixture.db.selectFrom('payments_dashboard_links').selectAll().where('user_id', '=', fixture.userId).execute()
  assert.equal(stored.token_hash, createHash('sha256').update(token).digest('hex'), 'only the hash of the token is kept')
  assert.equal(stored.expires, new Date(fixture.clock.now().getTime() + 15 * MINUTE).toISOString())

  const followed = await fixture.follow(token)
  assert.equal(followed.statusCode, 201, followed.body)
  const session = followed.json().session
  assert.deepEqual(session.user, { id: fixture.userId, email: fixture.email })
  assert.equal(session.app, undefined)
  const cookie = sessionCookie(followed)
  const [row] = await fixture.db.selectFrom('payments_dashboard_user_sessions').selectAll().where('user_id', '=', fixture.userId).execute()
  assert.equal(row.token_hash, createHash('sha256').update(cookie.split('=')[1]).digest('hex'))
  const current = await fixture.app.inject({ url: '/dashboard/session', headers: { cookie } })
  assert.deepEqual(current.json().session, session)

  // The user sees their merchants and acts on them with the cookie and the CSRF token.
  const merchants = await fixture.app.inject({ url: `/identities/${fixture.userId}/merchants?limit=10`, headers: { cookie } })
  assert.equal(merchants.statusCode, 200, merchants.body)
  assert.deepEqual((merchants.json() as Array<{ id: string }>).map((merchant) => merchant.id), [fixture.merchant.id])
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  const captured = await fixture.app.inject({
    method: 'POST',
    url: `/transactions/${id}/captures`,
    headers: { cookie, 'x-csrf-token': session.csrfToken },
    payload: { amount: 400 },
  })
  assert.equal(captured.statusCode, 201, captured.body)
  const byKey = await fixture.app.inject({ method: 'POST', url: `/transactions/${id}/voids`, headers: { authorization: basic(fixture.owner.key) }, payload: { amount: 100 } })
  assert.equal(byKey.statusCode, 201, byKey.body)
  const user = { type: 'user', id: fixture.userId, email: fixture.email }
  const app = { type: 'app', id: fixture.owner.id }
  const trail = (await fixture.app.inject({ url: `/transactions/${id}`, headers: { cookie } })).json().transaction.trail
  assert.deepEqual(
    trail.map((entry: { actor?: unknown }) => entry.actor),
    [user, app],
  )
  const events = await fixture.app.inject({ url: `/merchants/${fixture.merchant.id}/events?limit=10&filter[transactionId]=${id}`, headers: { cookie } })
  assert.deepEqual(
    (events.json() as Array<{ type: string; actor?: unknown }>).map((event) => [event.type, event.actor]),
    [
      ['transaction.voided', app],
      ['transaction.captured', user],
      ['transaction.authorized', undefined],
    ],
  )

  // What only an app can do is refused to a user; signing out ends the session.
  const me = await fixture.app.inject({ url: '/me', headers: { cookie } })
  assert.equal(me.statusCode, 403)
  const create = await fixture.app.inject({ method: 'POST', url: '/merchants', headers: { cookie, 'x-csrf-token': session.csrfToken }, payload: {} })
  assert.equal(create.statusCode, 403)
  const out = await fixture.app.inject({ method: 'DELETE', url: '/dashboard/session', headers: { cookie, 'x-csrf-token': session.csrfToken } })
  assert.equal(out.statusCode, 204)
  assert.equal((await fixture.app.inject({ url: `/merchants/${fixture.merchant.id}`, headers: { cookie } })).statusCode, 401)
  assert.equal((await fixture.db.selectFrom('payments_dashboard_user_sessions').selectAll().where('user_id', '=', fixture.userId).execute()).length, 0)
})

test('the answer is the same for a user, an unknown address and a removed user; only the user gets an e-mail', async () => {
  const fixture = await fresh()
  const removed = `gone.${fixture.owner.id.toLowerCase()}@shop.example`
  const removedId = await inviteUser(fixture.app, fixture.owner.key, fixture.merchant.id, removed)
  const revoked = await fixture.app.inject({ method: 'DELETE', url: `/merchants/${fixture.merchant.id}/users/${removedId}`, headers: { authorization: basic(fixture.owner.key) } })
  assert.equal(revoked.statusCode, 204, revoked.body)
  const unknown = `nobody.${fixture.owner.id.toLowerCase()}@shop.example`

  const answers = [await fixture.askForLink(unknown), await fixture.askForLink(removed), await fixture.askForLink(fixture.email)]
  for (const answer of answers) assert.deepEqual(observable(answer), observable(answers[2]))
  await awaitSignInMail(fixture.db, fixture.email)
  assert.deepEqual(await signInMails(fixture.db, unknown), [])
  assert.deepEqual(await signInMails(fixture.db, removed), [])

  // A malformed address is a 400 whoever asks; a request from another site is refused.
  const malformed = await fixture.askForLink('not an e-mail')
  assert.equal(malformed.statusCode, 400)
  assert.deepEqual(malformed.json(), [{ field: 'email', message: 'must be an e-mail address' }])
  const crossSite = await fixture.askForLink(fixture.email, { headers: { 'sec-fetch-site': 'cross-site' } })
  assert.equal(crossSite.statusCode, 403)
})

test('a link works once: a second follow, or two at once, sign in only one browser', async () => {
  const fixture = await fresh()
  const token = await linkToken(fixture)
  assert.equal((await fixture.follow(token)).statusCode, 201)
  const again = await fixture.follow(token)
  assert.equal(again.statusCode, 401)
  assert.equal(again.json().code, 'unauthorized')
  assert.match(again.json().message, /not valid/)
  assert.equal(again.headers['set-cookie'], undefined)

  const racing = await linkToken(fixture, 2)
  const both = await Promise.all([fixture.follow(racing), fixture.follow(racing)])
  assert.deepEqual(both.map((response) => response.statusCode).sort(), [201, 401])
  assert.equal((await fixture.follow('x'.repeat(43))).statusCode, 401, 'an unknown token')
})

test('a link expires after PAYMENTS_DASHBOARD_LINK_TTL (15 min): a minute before it works, at 15 min it does not', async () => {
  const fixture = await fresh()
  const early = await linkToken(fixture)
  const late = await linkToken(fixture, 2)
  fixture.clock.advance(14 * MINUTE)
  assert.equal((await fixture.follow(early)).statusCode, 201)
  fixture.clock.advance(MINUTE)
  const expired = await fixture.follow(late)
  assert.equal(expired.statusCode, 401)
  assert.equal(expired.json().code, 'unauthorized')
})

test('a user removed from their last merchant is signed out, and a link sent before does not sign in', async () => {
  const fixture = await fresh()
  const signedIn = await fixture.follow(await linkToken(fixture))
  const cookie = sessionCookie(signedIn)
  assert.equal((await fixture.app.inject({ url: '/dashboard/session', headers: { cookie } })).statusCode, 200)
  const token = await linkToken(fixture, 2)
  const revoked = await fixture.app.inject({ method: 'DELETE', url: `/merchants/${fixture.merchant.id}/users/${fixture.userId}`, headers: { authorization: basic(fixture.owner.key) } })
  assert.equal(revoked.statusCode, 204)
  const followed = await fixture.follow(token)
  assert.equal(followed.statusCode, 401)
  assert.equal(followed.headers['set-cookie'], undefined)
  assert.equal((await fixture.app.inject({ url: '/dashboard/session', headers: { cookie } })).statusCode, 401)
  assert.equal((await fixture.app.inject({ url: `/merchants/${fixture.merchant.id}`, headers: { cookie } })).statusCode, 401)
})

test("a user's session changes state only with its CSRF token, and only at its own merchants", async () => {
  const fixture = await fresh()
  const followed = await fixture.follow(await linkToken(fixture))
  const cookie = sessionCookie(followed)
  const { csrfToken } = followed.json().session
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  for (const headers of [{ cookie }, { cookie, 'x-csrf-token': 'wrong' }, { cookie, 'x-csrf-token': `${csrfToken}x` }]) {
    const refused = await fixture.app.inject({ method: 'POST', url: `/transactions/${id}/captures`, headers, payload: { amount: 100 } })
    assert.equal(refused.statusCode, 403, JSON.stringify(headers))
    assert.equal(refused.json().code, 'forbidden')
  }
  const transaction = (await fixture.app.inject({ url: `/transactions/${id}`, headers: { cookie } })).json().transaction
  assert.equal(transaction.capturedAmount, 0)

  // Another merchant's transaction: 403 as for an app that is not a member.
  const stranger = await createApp(fixture.app, 'Stranger')
  const theirs = await createMerchant(fixture.app, stranger.key)
  const otherId = await authorize(fixture, theirs.id, { amount: 1000 })
  assert.equal((await fixture.app.inject({ url: `/transactions/${otherId}`, headers: { cookie } })).statusCode, 403)
  assert.equal((await fixture.app.inject({ url: `/merchants/${theirs.id}`, headers: { cookie } })).statusCode, 403)
})

test('links are limited per e-mail (5/h) and per address (30/h), counted whether or not the address is a user', async () => {
  const fixture = await fresh()
  for (let index = 0; index < 5; index++) assert.equal((await fixture.askForLink(fixture.email, { ip: `10.31.${addresses}.${index + 1}` })).statusCode, 202)
  const tooMany = await fixture.askForLink(fixture.email, { ip: '10.31.250.250' })
  assert.equal(tooMany.statusCode, 429)
  assert.equal(tooMany.json().code, 'rate_limited')
  assert.ok(Number(tooMany.headers['retry-after']) > 0)

  for (let index = 0; index < 30; index++) assert.equal((await fixture.askForLink(`n${index}.${fixture.owner.id.toLowerCase()}@shop.example`)).statusCode, 202)
  const fromAddress = await fixture.askForLink(`other.${fixture.owner.id.toLowerCase()}@shop.example`)
  assert.equal(fromAddress.statusCode, 429)
  // The next hour counts afresh.
  fixture.clock.advance(60 * MINUTE)
  assert.equal((await fixture.askForLink(fixture.email)).statusCode, 202)
})

test('the e-mail speaks Danish when asked from the Danish page; a link for another host needs PAYMENTS_PUBLIC_URL', async () => {
  const fixture = await fresh()
  assert.equal((await fixture.askForLink(fixture.email, { lang: 'da' })).statusCode, 202)
  const { mail, link } = await awaitSignInMail(fixture.db, fixture.email)
  assert.equal(mail.subject, 'Dit login-link til Triad Payments')
  assert.match(mail.body, /udløber om 15 minutter/)
  assert.match(link, /\/dashboard\?lang=da#sign-in=/)

  // A Host header that is no loopback one could be an attacker's: no link is built from it.
  const elsewhere = await fixture.askForLink(fixture.email, { headers: { host: 'evil.example' } })
  assert.equal(elsewhere.statusCode, 503)
  assert.equal((await signInMails(fixture.db, fixture.email)).length, 1)
})

test('with PAYMENTS_PUBLIC_URL the link goes there, and the lifetime follows PAYMENTS_DASHBOARD_LINK_TTL', async (t) => {
  const test = await paymentsApp(t, { env: { PAYMENTS_PUBLIC_URL: 'https://pay.example.com/', PAYMENTS_DASHBOARD_LINK_TTL: '5m' } })
  const owner = await createApp(test.app, 'Owner')
  const merchant = await createMerchant(test.app, owner.key)
  await inviteUser(test.app, owner.key, merchant.id, 'bo@shop.example')
  const asked = await test.app.inject({ method: 'POST', url: '/dashboard/sign-in-link', headers: { host: 'pay.example.com' }, payload: { email: 'bo@shop.example' } })
  assert.equal(asked.statusCode, 202, asked.body)
  assert.deepEqual(asked.json(), { linkLifetimeMinutes: 5 })
  const { link, token } = await awaitSignInMail(test.db, 'bo@shop.example')
  assert.equal(link, `https://pay.example.com/dashboard?lang=en#sign-in=${token}`)
  test.clock.advance(5 * MINUTE)
  const followed = await test.app.inject({ method: 'POST', url: '/dashboard/session/link', payload: { token } })
  assert.equal(followed.statusCode, 401)
})
