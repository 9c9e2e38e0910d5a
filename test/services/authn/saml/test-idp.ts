import { X509CertificateGenerator } from '@peculiar/x509'
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inflateRawSync } from 'node:zlib'
import { SignedXml } from 'xml-crypto'
import { encrypt } from 'xml-encryption'
import type { Cleanup } from '../../../helpers/build-app.ts'

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

export const ATTR = {
  email: 'urn:oid:0.9.2342.19200300.100.1.3',
  givenName: 'urn:oid:2.5.4.42',
  surname: 'urn:oid:2.5.4.4',
  principalName: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.6',
  affiliation: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.9',
  targetedId: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.10',
  pairwiseId: 'urn:oasis:names:tc:SAML:attribute:pairwise-id',
} as const

export interface KeyPair {
  key: string
  cert: string
}

/** An RSA key and a self-signed certificate, made at test time (nothing secret is checked in). */
export async function makeKeyPair(name = 'Test IdP'): Promise<KeyPair> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
  const keys = {
    privateKey: await crypto.subtle.importKey('pkcs8', privateKey.export({ type: 'pkcs8', format: 'der' }), algorithm, false, ['sign']),
    publicKey: await crypto.subtle.importKey('spki', publicKey.export({ type: 'spki', format: 'der' }), algorithm, true, ['verify']),
  }
  const cert = await X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}`,
    notBefore: new Date('2025-01-01T00:00:00Z'),
    notAfter: new Date('2040-01-01T00:00:00Z'),
    keys,
    signingAlgorithm: algorithm,
  })
  return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), cert: cert.toString('pem') }
}

const certBody = (pem: string) => pem.replace(/-----[^-]+-----|\s+/g, '')

export interface AssertionOptions {
  /** The AuthnRequest ID answered (from the redirect); omitted for an unsolicited response. */
  inResponseTo?: string
  nameId?: string
  attributes?: Record<string, string | string[]>
  /** eduPersonTargetedID as SAML2 sends it: a NameID inside the value. */
  targetedId?: string
  audience?: string
  recipient?: string
  destination?: string
  issueInstant?: Date
  notBefore?: Date
  notOnOrAfter?: Date
  assertionId?: string
  issuer?: string
}

/**
 * A SAML identity provider small enough to read: it publishes metadata (a file, rewritten on a
 * key rollover), reads Triad's AuthnRequest from the redirect URL and writes the Response the
 * way Shibboleth does (assertion signed with RSA-SHA256, exclusive C14N), or signs the whole
 * response, encrypts, or not at all, as a test asks. xml-crypto does the signing.
 */
export async function startTestIdp(t: Cleanup, options: { entityId?: string } = {}) {
  const entityId = options.entityId ?? 'https://idp.example.edu/idp/shibboleth'
  const ssoUrl = 'https://idp.example.edu/idp/profile/SAML2/Redirect/SSO'
  const sloUrl = 'https://idp.example.edu/idp/profile/SAML2/Redirect/SLO'
  const dir = mkdtempSync(join(tmpdir(), 'triad-saml-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const metadataPath = join(dir, 'idp-metadata.xml')
  let keys = await makeKeyPair()

  function writeMetadata(certs: readonly KeyPair[]) {
    const descriptors = certs
      .map((pair) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody(pair.cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`)
      .join('')
    writeFileSync(
      metadataPath,
      `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${descriptors}
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sloUrl}"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ssoUrl}/POST"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${ssoUrl}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`,
    )
  }
  writeMetadata([keys])

  /** Reads the AuthnRequest out of the HTTP-Redirect URL Triad sent the browser to. */
  function readRequest(location: string): { id: string; acsUrl: string; issuer: string; xml: string; url: URL } {
    const url = new URL(location)
    const xml = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8')
    const id = /\sID="([^"]+)"/.exec(xml)?.[1] ?? ''
    const acsUrl = /AssertionConsumerServiceURL="([^"]+)"/.exec(xml)?.[1] ?? ''
    const issuer = /<saml:Issuer[^>]*>([^<]+)</.exec(xml)?.[1] ?? ''
    return { id, acsUrl, issuer, xml, url }
  }

  function assertionXml(o: AssertionOptions & { audience: string; recipient: string }): string {
    const now = o.issueInstant ?? new Date()
    const notBefore = o.notBefore ?? new Date(now.getTime() - 60_000)
    const notOnOrAfter = o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)
    const inResponseTo = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : ''
    const attributes = Object.entries(o.attributes ?? {})
      .map(([name, value]) => {
        const values = (Array.isArray(value) ? value : [value]).map((item) => `<saml:AttributeValue>${item}</saml:AttributeValue>`).join('')
        return `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri">${values}</saml:Attribute>`
      })
      .concat(
        o.targetedId
          ? [
              `<saml:Attribute Name="${ATTR.targetedId}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri"><saml:AttributeValue><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" NameQualifier="${entityId}">${o.targetedId}</saml:NameID></saml:AttributeValue></saml:Attribute>`,
            ]
          : [],
      )
      .join('')
    return (
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.assertionId ?? `_a${randomUUID().replaceAll('-', '')}`}" Version="2.0" IssueInstant="${now.toISOString()}">` +
      `<saml:Issuer>${o.issuer ?? entityId}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:transient">${o.nameId ?? '_transient123'}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${inResponseTo} NotOnOrAfter="${notOnOrAfter.toISOString()}" Recipient="${o.recipient}"/></saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${notBefore.toISOString()}" NotOnOrAfter="${notOnOrAfter.toISOString()}"><saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
      (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
      '</saml:Assertion>'
    )
  }

  function responseXml(inner: string, o: AssertionOptions & { destination: string }): string {
    const inResponseTo = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : ''
    return (
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomUUID().replaceAll('-', '')}" Version="2.0" IssueInstant="${(o.issueInstant ?? new Date()).toISOString()}" Destination="${o.destination}"${inResponseTo}>` +
      `<saml:Issuer>${entityId}</saml:Issuer>` +
      '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
      inner +
      '</samlp:Response>'
    )
  }

  /** Signs the element `localName` (its first occurrence) of `xml`, the signature placed after its Issuer. */
  function sign(xml: string, localName: 'Assertion' | 'Response' | 'LogoutRequest' | 'LogoutResponse', pair: KeyPair = keys): string {
    const signed = new SignedXml({ privateKey: pair.key, publicCert: pair.cert, signatureAlgorithm: RSA_SHA256, canonicalizationAlgorithm: EXC_C14N })
    const path = `//*[local-name(.)='${localName}']`
    signed.addReference({ xpath: path, digestAlgorithm: SHA256, transforms: [ENVELOPED, EXC_C14N] })
    signed.computeSignature(xml, { location: { reference: `${path}/*[local-name(.)='Issuer']`, action: 'after' } })
    return signed.getSignedXml()
  }

  function encryptAssertion(assertion: string, spCert: string): Promise<string> {
    return new Promise((resolve, reject) => {
      encrypt(
        assertion,
        {
          rsa_pub: spCert,
          pem: spCert,
          encryptionAlgorithm: 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
          keyEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
        },
        (error, result) => (error ? reject(error) : resolve(`<saml:EncryptedAssertion>${result}</saml:EncryptedAssertion>`)),
      )
    })
  }

  return {
    entityId,
    ssoUrl,
    sloUrl,
    /** The provider's answer to Triad's LogoutRequest, as posted back to Triad's single-logout endpoint. */
    logoutResponse(o: { inResponseTo: string; destination: string; sign?: boolean; signer?: KeyPair }): string {
      const xml =
        `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_lr${randomUUID().replaceAll('-', '')}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${o.destination}" InResponseTo="${o.inResponseTo}">` +
        `<saml:Issuer>${entityId}</saml:Issuer>` +
        '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
        '</samlp:LogoutResponse>'
      return Buffer.from(o.sign === false ? xml : sign(xml, 'LogoutResponse', o.signer), 'utf8').toString('base64')
    },
    /** A base64 LogoutRequest for `nameId`, posted to `destination` (front-channel single logout), signed unless `sign` is false. */
    logoutRequest(o: { nameId: string; destination: string; notOnOrAfter?: Date; sign?: boolean; signer?: KeyPair }): string {
      const until = o.notOnOrAfter ? ` NotOnOrAfter="${o.notOnOrAfter.toISOString()}"` : ''
      const xml =
        `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_l${randomUUID().replaceAll('-', '')}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${o.destination}"${until}>` +
        `<saml:Issuer>${entityId}</saml:Issuer>` +
        `<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:transient">${o.nameId}</saml:NameID>` +
        '<samlp:SessionIndex>_s1</samlp:SessionIndex>' +
        '</samlp:LogoutRequest>'
      return Buffer.from(o.sign === false ? xml : sign(xml, 'LogoutRequest', o.signer), 'utf8').toString('base64')
    },
    metadataPath,
    get keys() {
      return keys
    },
    readRequest,
    assertionXml,
    responseXml,
    sign,
    /** A new signing key, published in new metadata (with the old one beside it, if `keepOld`). */
    async rollKey(keepOld = false): Promise<KeyPair> {
      const old = keys
      keys = await makeKeyPair('Test IdP rolled')
      writeMetadata(keepOld ? [old, keys] : [keys])
      return keys
    },

    /**
     * The base64 SAMLResponse answering the request in `location`, as Shibboleth would post it;
     * `mode` says what is signed, `tamper` edits the XML after signing (an attack).
     */
    async respond(
      location: string,
      o: AssertionOptions & { sign?: 'assertion' | 'response' | 'both' | 'none'; signer?: KeyPair; encryptFor?: string; tamper?: (xml: string) => string } = {},
    ): Promise<string> {
      const request = readRequest(location)
      const full = {
        ...o,
        inResponseTo: 'inResponseTo' in o ? o.inResponseTo : request.id,
        audience: o.audience ?? request.issuer,
        recipient: o.recipient ?? request.acsUrl,
        destination: o.destination ?? request.acsUrl,
      }
      const mode = o.sign ?? 'assertion'
      let assertion = assertionXml(full)
      if (mode === 'assertion' || mode === 'both') assertion = sign(assertion, 'Assertion', o.signer)
      if (o.encryptFor) assertion = await encryptAssertion(assertion, o.encryptFor)
      let xml = responseXml(assertion, full)
      if (mode === 'response' || mode === 'both') xml = sign(xml, 'Response', o.signer)
      if (o.tamper) xml = o.tamper(xml)
      return Buffer.from(xml, 'utf8').toString('base64')
    },
  }
}

export type TestIdp = Awaited<ReturnType<typeof startTestIdp>>
