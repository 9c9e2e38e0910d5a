import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp } from '../../../helpers/build-app.ts'
import { addEperson, statusOf } from '../helpers.ts'
import { BASE_URL, beginLogin, finishLogin, newBrowser, postResponse, startSaml } from './saml-harness.ts'
import { ATTR, makeKeyPair, type TestIdp } from './test-idp.ts'

const SLO = `${BASE_URL}/server/saml2/single-logout/uni`

/** A SAML login whose assertion carries `nameId`; the token it gives. */
async function loginAs(app: TestApp, idp: TestIdp, nameId: string): Promise<string> {
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  await postResponse(browser, await idp.respond(location, { issueInstant: app.clock.now(), nameId, attributes: { [ATTR.email]: 'olga@example.edu' } }))
  const login = await finishLogin(browser)
  assert.equal(login.statusCode, 200, login.body)
  return browser.token ?? ''
}

function postLogout(app: TestApp, samlRequest: string) {
  return app.app.inject({
    method: 'POST',
    url: '/server/saml2/single-logout/uni',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.example.edu' },
    payload: new URLSearchParams({ SAMLRequest: samlRequest, RelayState: 'r1' }).toString(),
  })
}

test('the SP metadata names the single-logout endpoint', async (t) => {
  const { test: app } = await startSaml(t)
  const metadata = await app.app.inject({ method: 'GET', url: '/server/saml2/service-provider-metadata/uni' })
  assert.match(metadata.body, new RegExp(`SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${SLO}"`))
})

test('a signed LogoutRequest from the provider ends the person’s sessions and answers with a LogoutResponse redirect', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  await addEperson(app, 'olga@example.edu')
  const token = await loginAs(app, idp, '_name-olga')
  assert.equal((await statusOf(app.app, token)).body.authenticated, true)
  const response = await postLogout(app, idp.logoutRequest({ nameId: '_name-olga', destination: SLO }))
  assert.equal(response.statusCode, 302, response.body)
  const location = new URL(String(response.headers.location))
  assert.equal(`${location.origin}${location.pathname}`, idp.sloUrl)
  assert.ok(location.searchParams.get('SAMLResponse'))
  assert.equal(location.searchParams.get('RelayState'), 'r1')
  assert.ok(location.searchParams.get('Signature'), 'the LogoutResponse is signed')
  assert.equal((await statusOf(app.app, token)).body.authenticated, false)
})

test('an unsigned, foreign-signed, expired or misaddressed LogoutRequest is refused and ends nothing', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  await addEperson(app, 'olga@example.edu')
  const token = await loginAs(app, idp, '_name-olga')
  const stranger = await makeKeyPair('Someone else')
  for (const forged of [
    idp.logoutRequest({ nameId: '_name-olga', destination: SLO, sign: false }),
    idp.logoutRequest({ nameId: '_name-olga', destination: SLO, signer: stranger }),
    idp.logoutRequest({ nameId: '_name-olga', destination: SLO, notOnOrAfter: new Date(app.clock.now().getTime() - 60_000) }),
    idp.logoutRequest({ nameId: '_name-olga', destination: 'https://other-sp.example.org/slo' }),
  ]) {
    const response = await postLogout(app, forged)
    assert.equal(response.statusCode, 401, response.body)
    assert.equal(response.json().message, 'Authentication failed!')
  }
  assert.equal((await statusOf(app.app, token)).body.authenticated, true)
  // A NameID nobody was given ends nothing either, and is answered as a success (the provider's view).
  assert.equal((await postLogout(app, idp.logoutRequest({ nameId: '_someone-else', destination: SLO }))).statusCode, 302)
  assert.equal((await statusOf(app.app, token)).body.authenticated, true)
})

function postLogoutResponse(app: TestApp, samlResponse: string) {
  return app.app.inject({
    method: 'POST',
    url: '/server/saml2/single-logout/uni',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.example.edu' },
    payload: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
  })
}

test('POST /authn/logout with action, after a SAML login, sends the browser to the provider with a signed LogoutRequest, and its LogoutResponse back to `return`', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  await addEperson(app, 'olga@example.edu')
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  await postResponse(browser, await idp.respond(location, { issueInstant: app.clock.now(), nameId: '_name-olga', attributes: { [ATTR.email]: 'olga@example.edu' } }))
  assert.equal((await finishLogin(browser)).statusCode, 200)
  const token = browser.token ?? ''

  const logout = await browser.request('POST', `authn/logout?action=logout&return=${encodeURIComponent('https://ui.example.org/bye')}`)
  assert.equal(logout.statusCode, 302, logout.body)
  assert.equal((await statusOf(app.app, token)).body.authenticated, false, 'Triad’s sessions end at once')
  const toProvider = new URL(String(logout.headers.location))
  assert.equal(`${toProvider.origin}${toProvider.pathname}`, idp.sloUrl)
  assert.ok(toProvider.searchParams.get('Signature'), 'the LogoutRequest is signed')
  const request = idp.readRequest(String(logout.headers.location))
  assert.match(request.xml, /<samlp:LogoutRequest/)
  assert.match(request.xml, /_name-olga/)

  // A forged or unsigned answer does not redirect; the provider's signed one does, once.
  assert.equal((await postLogoutResponse(app, idp.logoutResponse({ inResponseTo: request.id, destination: SLO, sign: false }))).statusCode, 401)
  assert.equal((await postLogoutResponse(app, idp.logoutResponse({ inResponseTo: '_other', destination: SLO }))).statusCode, 401)
  const back = await postLogoutResponse(app, idp.logoutResponse({ inResponseTo: request.id, destination: SLO }))
  assert.equal(back.statusCode, 302, back.body)
  assert.equal(back.headers.location, 'https://ui.example.org/bye')
  assert.equal((await postLogoutResponse(app, idp.logoutResponse({ inResponseTo: request.id, destination: SLO }))).statusCode, 401)
})

test('logout without action, or after a password login, keeps DSpace’s answer (204)', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  await addEperson(app, 'olga@example.edu')
  const saml = newBrowser(app)
  const location = await beginLogin(saml)
  await postResponse(saml, await idp.respond(location, { issueInstant: app.clock.now(), nameId: '_n', attributes: { [ATTR.email]: 'olga@example.edu' } }))
  await finishLogin(saml)
  assert.equal((await saml.request('POST', 'authn/logout')).statusCode, 204)
  const { loggedIn } = await import('../helpers.ts')
  const password = await loggedIn(app.app, 'olga@example.edu')
  assert.equal((await password.request('POST', 'authn/logout?action=logout')).statusCode, 204)
})
