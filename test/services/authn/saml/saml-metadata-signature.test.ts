import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { SignedXml } from 'xml-crypto'
import { addEperson, startAuthn } from '../helpers.ts'
import { beginLogin, finishLogin, newBrowser, postResponse, UI } from './saml-harness.ts'
import { ATTR, type KeyPair, makeKeyPair, startTestIdp, type TestIdp } from './test-idp.ts'

/**
 * Federations publish their members' metadata as one signed aggregate; a provider may sign its
 * own. With a signing certificate (or its fingerprint) configured, Triad uses metadata only as
 * the signer signed it.
 */

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

/** The metadata signed as a federation signs it: an enveloped signature first in the root, over the root's ID, the signer's certificate in KeyInfo. */
function signMetadata(xml: string, signer: KeyPair, validUntil?: Date): string {
  const withId = xml.replace('<md:EntityDescriptor ', `<md:EntityDescriptor ID="_md1"${validUntil ? ` validUntil="${validUntil.toISOString()}"` : ''} `)
  const signed = new SignedXml({ privateKey: signer.key, publicCert: signer.cert, signatureAlgorithm: RSA_SHA256, canonicalizationAlgorithm: EXC_C14N })
  signed.addReference({ xpath: '/*', digestAlgorithm: SHA256, transforms: [ENVELOPED, EXC_C14N] })
  signed.computeSignature(withId, { location: { reference: '/*', action: 'prepend' } })
  return signed.getSignedXml()
}

interface Setup {
  idp: TestIdp
  federation: KeyPair
  /** Where the provider's metadata is read from (rewrite it to change what Triad reads next). */
  path: string
  write(xml: string): void
  original: string
}

async function setup(t: TestContext): Promise<Setup> {
  const idp = await startTestIdp(t)
  const federation = await makeKeyPair('Federation metadata signer')
  const dir = mkdtempSync(join(tmpdir(), 'triad-signed-md-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'aggregate.xml')
  const write = (xml: string) => writeFileSync(path, xml)
  return { idp, federation, path, write, original: readFileSync(idp.metadataPath, 'utf8') }
}

async function start(t: TestContext, s: Setup, trust: Record<string, string>, env: Record<string, string> = {}) {
  return startAuthn(t, {
    AUTHN_ALLOWED_ORIGINS: UI,
    AUTHN_SAML_BASE_URL: 'https://repo.example.org',
    AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', metadata: s.path, ...trust }]),
    ...env,
  })
}

/** A whole login through provider `uni`; the status of the step that stopped it (200 when the token came). */
async function login(test: Awaited<ReturnType<typeof start>>, idp: TestIdp): Promise<number> {
  const browser = newBrowser(test)
  const started = await browser.request('GET', '/server/saml2/authenticate/uni')
  if (started.statusCode !== 302) return started.statusCode
  const location = await beginLogin(browser)
  const consumed = await postResponse(browser, await idp.respond(location, { issueInstant: test.clock.now(), attributes: { [ATTR.email]: 'olga@example.edu' } }))
  if (consumed.statusCode !== 302) return consumed.statusCode
  return (await finishLogin(browser)).statusCode
}

test('metadata signed by the configured certificate (PEM or file) is used; the login goes through', async (t) => {
  const s = await setup(t)
  s.write(signMetadata(s.original, s.federation))
  const app = await start(t, s, { metadataSigningCertificate: s.federation.cert })
  await addEperson(app, 'olga@example.edu')
  assert.equal(await login(app, s.idp), 200)

  const certFile = join(tmpdir(), `triad-md-signer-${process.pid}.pem`)
  writeFileSync(certFile, s.federation.cert)
  t.after(() => rmSync(certFile, { force: true }))
  const fromFile = await start(t, s, { metadataSigningCertificate: certFile })
  await addEperson(fromFile, 'olga@example.edu')
  assert.equal(await login(fromFile, s.idp), 200)
})

test('unsigned metadata is refused when a signing certificate is configured: the provider is unavailable (503), never trusted', async (t) => {
  const s = await setup(t)
  s.write(s.original)
  const app = await start(t, s, { metadataSigningCertificate: s.federation.cert })
  const response = await app.app.inject({ method: 'GET', url: '/server/saml2/authenticate/uni' })
  assert.equal(response.statusCode, 503)
  assert.equal(response.json().status, 503)
})

test('metadata altered after signing (another certificate swapped in), or signed by another key, is refused', async (t) => {
  const s = await setup(t)
  const attacker = await makeKeyPair('Attacker')
  const body = (pem: string) => pem.replace(/-----[^-]+-----|\s+/g, '')
  const signed = signMetadata(s.original, s.federation)
  s.write(signed.replace(body(s.idp.keys.cert), body(attacker.cert)))
  const app = await start(t, s, { metadataSigningCertificate: s.federation.cert })
  assert.equal(await login(app, s.idp), 503)

  s.write(signMetadata(s.original, attacker))
  const other = await start(t, s, { metadataSigningCertificate: s.federation.cert })
  assert.equal(await login(other, s.idp), 503)
})

test('a signature over part of the document is refused (the signed descriptor wrapped inside an unsigned one)', async (t) => {
  const s = await setup(t)
  const attacker = await makeKeyPair('Attacker')
  const signed = signMetadata(s.original, s.federation)
  const signature = /<Signature[\s\S]*<\/Signature>/.exec(signed)?.[0] ?? ''
  const innerSigned = signed.replace(/^<\?xml[^>]*>\s*/, '')
  const forged = s.original
    .replace(s.idp.keys.cert.replace(/-----[^-]+-----|\s+/g, ''), attacker.cert.replace(/-----[^-]+-----|\s+/g, ''))
    .replace(/(<md:EntityDescriptor [^>]*>)/, `$1${signature}<md:Extensions>${innerSigned}</md:Extensions>`)
  s.write(forged)
  const app = await start(t, s, { metadataSigningCertificate: s.federation.cert })
  assert.equal(await login(app, s.idp), 503)
})

test('a fingerprint stands for the certificate: the signer in KeyInfo must have it', async (t) => {
  const s = await setup(t)
  s.write(signMetadata(s.original, s.federation))
  const fingerprint = new X509Certificate(s.federation.cert).fingerprint256
  const app = await start(t, s, { metadataSigningFingerprint: fingerprint })
  await addEperson(app, 'olga@example.edu')
  assert.equal(await login(app, s.idp), 200)

  const stranger = new X509Certificate((await makeKeyPair('Someone else')).cert).fingerprint256
  const wrong = await start(t, s, { metadataSigningFingerprint: stranger.replaceAll(':', '').toLowerCase() })
  assert.equal(await login(wrong, s.idp), 503)
})

test('metadata past its validUntil is refused, and a refresh that fails the signature check keeps the last good copy', async (t) => {
  const s = await setup(t)
  const app = await start(t, s, { metadataSigningCertificate: s.federation.cert }, { AUTHN_SAML_METADATA_REFRESH: '10m' })
  await addEperson(app, 'olga@example.edu')
  s.write(signMetadata(s.original, s.federation, new Date(app.clock.now().getTime() - 1000)))
  assert.equal(await login(app, s.idp), 503, 'expired')

  s.write(signMetadata(s.original, s.federation, new Date(app.clock.now().getTime() + 24 * 3600_000)))
  assert.equal(await login(app, s.idp), 200)
  // The next copy is tampered with: refused, and the one in memory goes on serving.
  s.write(s.original)
  app.clock.advance(11 * 60_000)
  assert.equal(await login(app, s.idp), 200)
})

test('the metadata signing settings are checked at start', async (t) => {
  const base = { AUTHN_SAML_BASE_URL: 'https://repo.example.org' }
  const providers = (extra: Record<string, unknown>) => JSON.stringify([{ id: 'uni', metadata: '/etc/idp.xml', ...extra }])
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: providers({ metadataSigningCertificate: '/nonexistent/signer.pem' }) }), /neither a PEM certificate nor a readable PEM file/)
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: providers({ metadataSigningFingerprint: 'abc' }) }), /AUTHN_SAML_PROVIDERS\[0\]: \/metadataSigningFingerprint/)
  const cert = (await makeKeyPair()).cert
  const fingerprint = new X509Certificate(cert).fingerprint256
  await assert.rejects(startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: providers({ metadataSigningCertificate: cert, metadataSigningFingerprint: fingerprint }) }), /not both/)
  await assert.rejects(
    startAuthn(t, { ...base, AUTHN_SAML_PROVIDERS: JSON.stringify([{ id: 'uni', entityId: 'https://idp', ssoUrl: 'https://idp/sso', certificates: [cert], metadataSigningCertificate: cert }]) }),
    /metadata signing certificate but no "metadata"/,
  )
})
