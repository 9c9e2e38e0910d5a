import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { test } from 'node:test'
import type { TestApp } from '../../../helpers/build-app.ts'
import { addEperson, statusOf } from '../helpers.ts'
import { beginLogin, finishLogin, newBrowser, postResponse, startSaml } from './saml-harness.ts'
import { ATTR, type AssertionOptions, makeKeyPair, type TestIdp } from './test-idp.ts'

const EMAIL = 'olga@example.edu'

/** A refused response: 401 in DSpace's body, no hand-off cookie, and the following login fails too. */
async function assertRefused(app: TestApp, browser: ReturnType<typeof newBrowser>, response: LightMyRequestResponse) {
  assert.equal(response.statusCode, 401, response.body)
  const body = response.json()
  assert.equal(body.status, 401)
  assert.equal(body.message, 'Authentication failed!')
  assert.match(body.path, /^\/server\/saml2\/assertion-consumer\//)
  assert.equal(browser.cookies.has('Authorization-cookie'), false)
  assert.equal((await finishLogin(browser)).statusCode, 401)
  assert.equal((await statusOf(app.app, browser.token)).body.authenticated, false)
}

async function accepted(browser: ReturnType<typeof newBrowser>, response: LightMyRequestResponse) {
  assert.equal(response.statusCode, 302, response.body)
  const login = await finishLogin(browser)
  assert.equal(login.statusCode, 200, login.body)
}

/** A login started in a fresh browser, answered by the IdP with `options` (the assertion issued now, by the app's clock). */
async function attempt(app: TestApp, idp: TestIdp, options: Parameters<TestIdp['respond']>[1] = {}) {
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  const samlResponse = await idp.respond(location, { issueInstant: app.clock.now(), attributes: { [ATTR.email]: EMAIL }, ...options })
  return { browser, location, samlResponse, response: await postResponse(browser, samlResponse) }
}

async function setUp(t: Parameters<typeof startSaml>[0]) {
  const started = await startSaml(t, { autoRegister: false })
  await addEperson(started.test, EMAIL)
  return started
}

test('a response signed on the assertion, or on the response, is accepted', async (t) => {
  const { test: app, idp } = await setUp(t)
  const byAssertion = await attempt(app, idp, { sign: 'assertion' })
  await accepted(byAssertion.browser, byAssertion.response)
  const byResponse = await attempt(app, idp, { sign: 'response' })
  await accepted(byResponse.browser, byResponse.response)
})

test('an unsigned response is refused', async (t) => {
  const { test: app, idp } = await setUp(t)
  const { browser, response } = await attempt(app, idp, { sign: 'none' })
  await assertRefused(app, browser, response)
})

test('a response signed by another key is refused', async (t) => {
  const { test: app, idp } = await setUp(t)
  const stranger = await makeKeyPair('Someone else')
  const onAssertion = await attempt(app, idp, { signer: stranger })
  await assertRefused(app, onAssertion.browser, onAssertion.response)
  const onResponse = await attempt(app, idp, { sign: 'response', signer: stranger })
  await assertRefused(app, onResponse.browser, onResponse.response)
})

test('a certificate rollover published in new metadata is accepted at once; the retired key is then refused', async (t) => {
  const { test: app, idp } = await setUp(t)
  const before = await attempt(app, idp)
  await accepted(before.browser, before.response)
  const old = idp.keys
  await idp.rollKey()
  const after = await attempt(app, idp)
  await accepted(after.browser, after.response)
  // The metadata no longer lists the old key; its next refresh (the interval, by the clock) drops it.
  app.clock.advance(61 * 60_000)
  const retired = await attempt(app, idp, { signer: old })
  await assertRefused(app, retired.browser, retired.response)
})

for (const [what, options] of [
  ['audience', { audience: 'https://other-sp.example.org/shibboleth' }],
  ['recipient', { recipient: 'https://repo.example.org/server/saml2/assertion-consumer/other' }],
  ['destination', { destination: 'https://other-sp.example.org/Shibboleth.sso/SAML2/POST' }],
] as Array<[string, AssertionOptions]>) {
  test(`a response with the wrong ${what} is refused`, async (t) => {
    const { test: app, idp } = await setUp(t)
    const { browser, response } = await attempt(app, idp, { ...options, sign: 'both' })
    await assertRefused(app, browser, response)
  })
}

test('NotBefore: a few seconds ahead of our clock is accepted, beyond the 30 s skew refused', async (t) => {
  const { test: app, idp } = await setUp(t)
  const now = app.clock.now().getTime()
  const slightlyAhead = await attempt(app, idp, { issueInstant: new Date(now + 20_000), notBefore: new Date(now + 20_000) })
  await accepted(slightlyAhead.browser, slightlyAhead.response)
  const ahead = await attempt(app, idp, { issueInstant: new Date(now + 45_000), notBefore: new Date(now + 45_000) })
  await assertRefused(app, ahead.browser, ahead.response)
})

test('NotOnOrAfter: a response past it by more than the skew is refused, within the skew accepted (clock moved, no sleep)', async (t) => {
  const { test: app, idp } = await setUp(t)
  const late = newBrowser(app)
  const location = await beginLogin(late)
  const issued = app.clock.now().getTime()
  const options = { issueInstant: new Date(issued), notOnOrAfter: new Date(issued + 5 * 60_000), attributes: { [ATTR.email]: EMAIL } }
  const stale = await idp.respond(location, options)
  app.clock.advance(5 * 60_000 + 31_000)
  await assertRefused(app, late, await postResponse(late, stale))

  const inTime = newBrowser(app)
  const second = await beginLogin(inTime)
  const now = app.clock.now().getTime()
  const fresh = await idp.respond(second, { ...options, issueInstant: new Date(now), notOnOrAfter: new Date(now + 5 * 60_000) })
  app.clock.advance(5 * 60_000 + 20_000)
  await accepted(inTime, await postResponse(inTime, fresh))
})

test('InResponseTo must name a request this deployment stored: unknown or missing (unsolicited) is refused', async (t) => {
  const { test: app, idp } = await setUp(t)
  const unknown = await attempt(app, idp, { inResponseTo: '_never-sent', sign: 'both' })
  await assertRefused(app, unknown.browser, unknown.response)
  const unsolicited = await attempt(app, idp, { inResponseTo: undefined, sign: 'both' })
  await assertRefused(app, unsolicited.browser, unsolicited.response)
})

test('a request expires after 10 minutes', async (t) => {
  const { test: app, idp } = await setUp(t)
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  app.clock.advance(11 * 60_000)
  const samlResponse = await idp.respond(location, { issueInstant: app.clock.now(), attributes: { [ATTR.email]: EMAIL } })
  await assertRefused(app, browser, await postResponse(browser, samlResponse))
})

test('a replayed response is refused, and so is the same assertion answering a second request', async (t) => {
  const { test: app, idp } = await setUp(t)
  const first = await attempt(app, idp, { assertionId: '_same-assertion' })
  await accepted(first.browser, first.response)
  const replayer = newBrowser(app)
  await assertRefused(app, replayer, await postResponse(replayer, first.samlResponse))
  const again = await attempt(app, idp, { assertionId: '_same-assertion' })
  await assertRefused(app, again.browser, again.response)
})

test('XML signature wrapping is refused: a forged assertion beside, or in place of, the signed one', async (t) => {
  const { test: app, idp } = await setUp(t)
  await addEperson(app, 'dean@example.edu')
  const swap = (xml: string) => xml.replaceAll(EMAIL, 'dean@example.edu')
  const signedAssertion = (xml: string) => /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)?.[0] ?? ''

  // Two assertions: the forged one first, the signed original after it.
  const beside = await attempt(app, idp, {
    tamper: (xml) => {
      const original = signedAssertion(xml)
      const forged = swap(original).replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '').replace(/ID="([^"]+)"/, 'ID="$1-evil"')
      return xml.replace(original, forged + original)
    },
  })
  await assertRefused(app, beside.browser, beside.response)

  // The forged assertion takes the original's place and id; the signed original hides in Extensions.
  const hidden = await attempt(app, idp, {
    tamper: (xml) => {
      const original = signedAssertion(xml)
      const forged = swap(original)
      return xml.replace(original, forged).replace('<samlp:Status>', `<samlp:Extensions>${original}</samlp:Extensions><samlp:Status>`)
    },
  })
  await assertRefused(app, hidden.browser, hidden.response)

  // A signed response whose assertion is swapped after signing.
  const afterSigning = await attempt(app, idp, { sign: 'response', tamper: swap })
  await assertRefused(app, afterSigning.browser, afterSigning.response)
})

test('comment injection is refused: user@evil.com<!---->.good.edu never becomes user@evil.com', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  await addEperson(app, 'user@evil.com')
  await addEperson(app, 'user@evil.com.good.edu')
  const { browser, response } = await attempt(app, idp, {
    attributes: { [ATTR.email]: 'user@evil.com.good.edu' },
    tamper: (xml) => xml.replace('user@evil.com.good.edu', 'user@evil.com<!---->.good.edu'),
  })
  await assertRefused(app, browser, response)
})

test('an encrypted assertion (to the certificate in Triad’s metadata) is decrypted and accepted', async (t) => {
  const { test: app, idp } = await setUp(t)
  const metadata = await app.app.inject({ method: 'GET', url: '/server/saml2/service-provider-metadata/uni' })
  const encryptionCert = /use="encryption"[\s\S]*?<ds:X509Certificate>([^<]+)</.exec(metadata.body)?.[1] ?? ''
  const pem = `-----BEGIN CERTIFICATE-----\n${encryptionCert.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----\n`
  const { browser, samlResponse, response } = await attempt(app, idp, { encryptFor: pem })
  assert.doesNotMatch(Buffer.from(samlResponse, 'base64').toString(), /olga@example\.edu/, 'the e-mail travels encrypted')
  await accepted(browser, response)
  const status = await statusOf(app.app, browser.token)
  assert.equal((status.body._embedded?.eperson as { email: string }).email, EMAIL)
})
