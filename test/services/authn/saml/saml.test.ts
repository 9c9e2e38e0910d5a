import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addEperson, statusOf } from '../helpers.ts'
import { ACS, beginLogin, finishLogin, newBrowser, postResponse, SP_ENTITY_ID, startSaml, UI } from './saml-harness.ts'
import { ATTR } from './test-idp.ts'

test('serves the service-provider metadata: entity id, assertion consumer URL, signing and encryption certificates', async (t) => {
  const { test: app } = await startSaml(t)
  const response = await app.app.inject({ method: 'GET', url: '/server/saml2/service-provider-metadata/uni' })
  assert.equal(response.statusCode, 200)
  assert.match(String(response.headers['content-type']), /application\/samlmetadata\+xml/)
  assert.match(response.body, new RegExp(`entityID="${SP_ENTITY_ID}"`))
  assert.match(response.body, new RegExp(`AssertionConsumerService[^>]*Location="${ACS}"`))
  assert.match(response.body, /KeyDescriptor use="signing"/)
  assert.match(response.body, /KeyDescriptor use="encryption"/)
  // The generated key lives in the secrets store, so a restart (or another instance) publishes the same certificate.
  const again = await app.app.inject({ method: 'GET', url: '/server/saml2/service-provider-metadata/uni' })
  const cert = (body: string) => /<ds:X509Certificate>([^<]+)</.exec(body)?.[1]
  assert.equal(cert(again.body), cert(response.body))
})

test('an unknown provider is 404 in DSpace’s error body', async (t) => {
  const { test: app } = await startSaml(t)
  const response = await app.app.inject({ method: 'GET', url: '/server/saml2/service-provider-metadata/nope' })
  assert.equal(response.statusCode, 404)
  const body = response.json()
  assert.equal(body.status, 404)
  assert.equal(body.path, '/server/saml2/service-provider-metadata/nope')
})

test('WWW-Authenticate lists a saml scheme at the authenticate URL beside password', async (t) => {
  const { test: app } = await startSaml(t)
  const browser = newBrowser(app)
  const response = await finishLogin(browser)
  assert.equal(response.statusCode, 401)
  const challenge = String(response.headers['www-authenticate'])
  assert.match(challenge, /password realm="DSpace REST API"/)
  assert.match(challenge, /saml realm="DSpace REST API", location="https:\/\/repo\.example\.org\/server\/saml2\/authenticate\/uni"/)
  const status = await app.app.inject({ method: 'GET', url: '/api/authn/status' })
  assert.match(String(status.headers['www-authenticate']), /saml realm=/)
})

test('the whole flow: redirect with a signed AuthnRequest stored in the database, signed response, then POST /authn/login gives the token', async (t) => {
  const { test: app, idp } = await startSaml(t)
  await addEperson(app, 'olga@example.edu')
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  const url = new URL(location)
  assert.equal(`${url.origin}${url.pathname}`, idp.ssoUrl)
  assert.ok(url.searchParams.get('Signature'), 'the AuthnRequest is signed (HTTP-Redirect binding)')
  assert.equal(url.searchParams.get('SigAlg'), 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
  const request = idp.readRequest(location)
  assert.equal(request.acsUrl, ACS)
  assert.equal(request.issuer, SP_ENTITY_ID)
  const stored = await app.database.db.selectFrom('authn_saml_requests' as never).select(['request_id' as never]).execute()
  assert.deepEqual(stored, [{ request_id: request.id }])

  const samlResponse = await idp.respond(location, { issueInstant: app.clock.now(), attributes: { [ATTR.email]: 'olga@example.edu' } })
  const consumed = await postResponse(browser, samlResponse)
  assert.equal(consumed.statusCode, 302, consumed.body)
  assert.equal(consumed.headers.location, `${UI}/home`)
  const login = await finishLogin(browser)
  assert.equal(login.statusCode, 200, login.body)
  const { body } = await statusOf(app.app, browser.token)
  assert.equal(body.authenticated, true)
  assert.equal(body.authenticationMethod, 'saml')
  assert.equal((body._embedded?.eperson as { email: string }).email, 'olga@example.edu')
})

test('redirectUrl is limited to the allowed origins, as for OIDC', async (t) => {
  const { test: app } = await startSaml(t)
  const response = await app.app.inject({ method: 'GET', url: `/server/saml2/authenticate/uni?redirectUrl=${encodeURIComponent('https://evil.example.com/')}` })
  assert.equal(response.statusCode, 400)
  assert.equal(response.json().message, 'Invalid redirectURL! Must match server or ui hostname.')
})

test('the response may reach another instance: the request started on A is consumed on B', async (t) => {
  const { test: a, idp } = await startSaml(t)
  const { startAuthn } = await import('../helpers.ts')
  const b = await startAuthn(
    t,
    { AUTHN_ALLOWED_ORIGINS: UI, AUTHN_SAML_BASE_URL: 'https://repo.example.org', AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', metadata: idp.metadataPath, autoRegister: true }]) },
    { database: a.database, clock: a.clock, secretStore: a.secretStore },
  )
  await addEperson(a, 'olga@example.edu')
  const onA = newBrowser(a)
  const location = await beginLogin(onA)
  const onB = newBrowser(b)
  const consumed = await postResponse(onB, await idp.respond(location, { issueInstant: a.clock.now(), attributes: { [ATTR.email]: 'olga@example.edu' } }))
  assert.equal(consumed.statusCode, 302, consumed.body)
  assert.equal((await finishLogin(onB)).statusCode, 200)
})

test('the configuration contract names what is wrong with AUTHN_SAML_PROVIDERS', async (t) => {
  const { startAuthn } = await import('../helpers.ts')
  const base = { AUTHN_SAML_BASE_URL: 'https://repo.example.org' }
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: '{not json' }), /AUTHN_SAML_PROVIDERS must be a JSON array/)
  await assert.rejects(startAuthn(t, { AUTHN_SAML_PROVIDERS: '[{"id":"uni","metadata":"/etc/idp.xml"}]' }), /needs AUTHN_SAML_BASE_URL/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: '[{"id":"uni"}]' }), /provider uni needs "metadata"/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: '[{"id":"uni","metadata":"a"},{"id":"uni","metadata":"b"}]' }), /used twice/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: '[{"id":"uni","metadata":"http://idp.example.edu/md"}]' }), /plain http/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: '[{"id":"u/ni","metadata":"a"}]' }), /AUTHN_SAML_PROVIDERS\[0\]: \/id/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: '[{"id":"uni","metadata":"a","colour":"red"}]' }), /AUTHN_SAML_PROVIDERS\[0\]/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_SP_KEY: 'x', AUTHN_SAML_PROVIDERS: '[{"id":"uni","metadata":"a"}]' }), /must be set together/)
})

test('a provider configured without metadata (entity id, SSO URL, certificates given) works the same', async (t) => {
  const { startTestIdp } = await import('./test-idp.ts')
  const { startAuthn } = await import('../helpers.ts')
  const idp = await startTestIdp(t)
  const app = await startAuthn(t, {
    AUTHN_ALLOWED_ORIGINS: UI,
    AUTHN_SAML_BASE_URL: 'https://repo.example.org',
    AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: [idp.keys.cert] }]),
  })
  await addEperson(app, 'olga@example.edu')
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  const consumed = await postResponse(browser, await idp.respond(location, { issueInstant: app.clock.now(), attributes: { [ATTR.email]: 'olga@example.edu' } }))
  assert.equal(consumed.statusCode, 302, consumed.body)
  assert.equal((await finishLogin(browser)).statusCode, 200)
})

test('the SAML routes are documented in the OpenAPI document under the authn tag', async (t) => {
  const { test: app } = await startSaml(t)
  const paths = (await app.app.inject({ method: 'GET', url: '/docs/json' })).json().paths
  for (const [path, method] of [
    ['/server/saml2/service-provider-metadata/{id}', 'get'],
    ['/server/saml2/authenticate/{id}', 'get'],
    ['/server/saml2/assertion-consumer/{id}', 'post'],
  ] as const) {
    assert.deepEqual(paths[path]?.[method]?.tags, ['authn'], `${method} ${path}`)
  }
  assert.ok(paths['/server/saml2/assertion-consumer/{id}'].post.responses['401'])
})

test('metadata from a URL is fetched, read again after AUTHN_SAML_METADATA_REFRESH, and its last good copy kept while the URL fails', async (t) => {
  const { createServer } = await import('node:http')
  const { readFileSync } = await import('node:fs')
  const { startTestIdp } = await import('./test-idp.ts')
  const { startAuthn } = await import('../helpers.ts')
  const idp = await startTestIdp(t)
  const served = { up: false, fetches: 0 }
  const server = createServer((_request, response) => {
    served.fetches++
    response.statusCode = served.up ? 200 : 503
    response.end(served.up ? readFileSync(idp.metadataPath) : 'down')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/idp-metadata.xml`
  const app = await startAuthn(t, {
    AUTHN_ALLOWED_ORIGINS: UI,
    AUTHN_SAML_BASE_URL: 'https://repo.example.org',
    AUTHN_SAML_METADATA_REFRESH: '10m',
    AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', metadata: url, allowHttp: true }]),
  })
  await addEperson(app, 'olga@example.edu')
  const login = async () => {
    const browser = newBrowser(app)
    const location = await beginLogin(browser)
    const consumed = await postResponse(browser, await idp.respond(location, { issueInstant: app.clock.now(), attributes: { [ATTR.email]: 'olga@example.edu' } }))
    return consumed.statusCode === 302 ? (await finishLogin(browser)).statusCode : consumed.statusCode
  }

  // Never read and unreachable: 503 with Retry-After, in DSpace's body.
  const unavailable = await app.app.inject({ method: 'GET', url: '/server/saml2/authenticate/uni' })
  assert.equal(unavailable.statusCode, 503)
  assert.equal(unavailable.headers['retry-after'], '30')
  assert.equal(unavailable.json().status, 503)

  served.up = true
  assert.equal(await login(), 200)
  const fetched = served.fetches
  assert.equal(await login(), 200)
  assert.equal(served.fetches, fetched, 'within the refresh interval the copy in memory serves')

  served.up = false
  app.clock.advance(11 * 60_000)
  assert.equal(await login(), 200, 'the URL fails: the last good copy is kept')
  assert.ok(served.fetches > fetched, 'it was tried again after the interval')
})

test('a supplied SP key and certificate are published; a certificate of another key is refused at start', async (t) => {
  const { makeKeyPair } = await import('./test-idp.ts')
  const { startAuthn } = await import('../helpers.ts')
  const mine = await makeKeyPair('Triad SP')
  const other = await makeKeyPair('Other')
  const env = (cert: string) => ({
    AUTHN_SAML_BASE_URL: 'https://repo.example.org',
    AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', entityId: 'https://idp.example.edu', ssoUrl: 'https://idp.example.edu/sso', certificates: [other.cert] }]),
    AUTHN_SAML_SP_KEY: mine.key.replaceAll('\n', '\\n'),
    AUTHN_SAML_SP_CERT: cert.replaceAll('\n', '\\n'),
  })
  const app = await startAuthn(t, env(mine.cert))
  const metadata = await app.app.inject({ method: 'GET', url: '/server/saml2/service-provider-metadata/uni' })
  assert.ok(metadata.body.includes(mine.cert.replace(/-----[^-]+-----|\s+/g, '').slice(0, 60)))
  await assert.rejects(startAuthn(t, env(other.cert)), /AUTHN_SAML_SP_CERT is not the certificate of AUTHN_SAML_SP_KEY/)
})

test('HTTP-POST binding (authnRequestBinding): a page whose form posts the signed AuthnRequest to the provider’s POST endpoint, scripts limited by a nonce', async (t) => {
  const { test: app, idp } = await startSaml(t, { authnRequestBinding: 'HTTP-POST' })
  await addEperson(app, 'olga@example.edu')
  const browser = newBrowser(app)
  const page = await browser.request('GET', `/server/saml2/authenticate/uni?redirectUrl=${encodeURIComponent(`${UI}/home`)}`)
  assert.equal(page.statusCode, 200)
  assert.match(String(page.headers['content-type']), /^text\/html/)
  assert.equal(page.headers['cache-control'], 'no-store')
  const nonce = /script-src 'nonce-([^']+)'/.exec(String(page.headers['content-security-policy']))?.[1]
  assert.ok(nonce)
  assert.match(page.body, new RegExp(`<script nonce="${nonce.replace(/[+/]/g, '\\$&')}">document.forms\\[0\\].submit\\(\\)</script>`))
  assert.match(page.body, new RegExp(`<form method="post" action="${idp.ssoUrl}/POST">`))
  const samlRequest = /name="SAMLRequest" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
  // Not deflated (that is HTTP-Redirect's encoding), and signed inside the XML.
  const xml = Buffer.from(samlRequest, 'base64').toString('utf8')
  assert.match(xml, /^<\?xml|^<samlp:AuthnRequest/)
  assert.match(xml, /<(ds:)?Signature[\s>]/)
  assert.match(xml, new RegExp(`AssertionConsumerServiceURL="${ACS}"`))
  assert.match(xml, /\sID="_[^"]+"/)
  // The provider answers it like any other request.
  const asRedirect = `${idp.ssoUrl}?SAMLRequest=${encodeURIComponent((await import('node:zlib')).deflateRawSync(xml).toString('base64'))}`
  const consumed = await postResponse(browser, await idp.respond(asRedirect, { issueInstant: app.clock.now(), attributes: { [ATTR.email]: 'olga@example.edu' } }))
  assert.equal(consumed.statusCode, 302, consumed.body)
  assert.equal((await finishLogin(browser)).statusCode, 200)
})
