import { X509CertificateGenerator } from '@peculiar/x509'
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto'
import type { Secrets } from '../../../../core/security/keyring.ts'

export interface SpCredentials {
  /** PEM private key: signs AuthnRequests, decrypts encrypted assertions. */
  key: string
  /** PEM certificate of `key`, published in the service-provider metadata. */
  cert: string
}

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const
// Federations expect long-lived SP certificates (they are trust anchors in metadata, not TLS).
const CERT_YEARS = 20

/**
 * The service provider's key and certificate: AUTHN_SAML_SP_KEY and AUTHN_SAML_SP_CERT when the
 * operator supplies them; otherwise an RSA key generated once into the secrets file (never the
 * database), as AUTHN_SECRET is. The certificate of a generated key is self-signed and derived
 * from the key alone (fixed serial and validity, deterministic RSA signature), so every
 * instance publishes the same certificate without storing it.
 */
export async function loadSpCredentials(secrets: Secrets, supplied: { key?: string; cert?: string }): Promise<SpCredentials> {
  if (supplied.key && supplied.cert) {
    // A certificate of another key would be published, and every provider's encryption to it would fail.
    if (!new X509Certificate(supplied.cert).checkPrivateKey(createPrivateKey(supplied.key))) {
      throw new Error('AUTHN_SAML_SP_CERT is not the certificate of AUTHN_SAML_SP_KEY')
    }
    return { key: supplied.key, cert: supplied.cert }
  }
  const keyring = secrets.keyring({
    name: 'authn.saml-sp',
    envVar: 'AUTHN_SAML_SP_KEY',
    supplied: [],
    generate: () => generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  })
  await keyring.init()
  const { active } = await keyring.current()
  return { key: active.secret, cert: await selfSignedCertificate(active.secret) }
}

async function selfSignedCertificate(privatePem: string): Promise<string> {
  const subtle = globalThis.crypto.subtle
  const pkcs8 = createPrivateKey(privatePem).export({ type: 'pkcs8', format: 'der' })
  const spki = createPublicKey(privatePem).export({ type: 'spki', format: 'der' })
  const keys = {
    privateKey: await subtle.importKey('pkcs8', pkcs8, RSA, false, ['sign']),
    publicKey: await subtle.importKey('spki', spki, RSA, true, ['verify']),
  }
  const serial = createHash('sha256').update(spki).digest('hex').slice(0, 16)
  const notBefore = new Date('2026-01-01T00:00:00Z')
  const notAfter = new Date(Date.UTC(2026 + CERT_YEARS, 0, 1))
  const certificate = await X509CertificateGenerator.createSelfSigned(
    { serialNumber: `01${serial}`, name: 'CN=Triad SAML service provider', notBefore, notAfter, keys, signingAlgorithm: RSA },
    globalThis.crypto,
  )
  return certificate.toString('pem')
}
