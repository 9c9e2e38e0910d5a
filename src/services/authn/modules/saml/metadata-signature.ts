import { DOMParser } from '@xmldom/xmldom'
import { X509Certificate } from 'node:crypto'
import { SignedXml } from 'xml-crypto'
import xpath from 'xpath'
import { type MetadataTrust, normalizeFingerprint } from '../../saml-config.ts'

const DS = 'http://www.w3.org/2000/09/xmldsig#'
const select = xpath.useNamespaces({ ds: DS })

/**
 * The metadata as its signer signed it, or an error saying why it cannot be trusted. The
 * signature must be one enveloped signature on the root element (EntityDescriptor or a
 * federation's EntitiesDescriptor) covering that whole element, by the trusted certificate;
 * what is returned is the signed content itself (xml-crypto's canonical copy of the
 * reference), never the document around it, so nothing unsigned can be slipped in beside it.
 */
export function verifiedMetadata(xml: string, trust: MetadataTrust): string {
  const document = new DOMParser({ onError: () => {} }).parseFromString(xml, 'text/xml')
  const root = document.documentElement
  if (!root) throw new Error('the metadata is not XML')
  const signatures = select('/*/ds:Signature', document as unknown as Node) as Element[]
  if (signatures.length === 0) throw new Error('the metadata is not signed, and a metadata signing certificate is configured')
  if (signatures.length > 1) throw new Error('the metadata carries more than one signature on its root')
  const signed = new SignedXml(
    trust.kind === 'certificate' ? { publicCert: trust.pem, getCertFromKeyInfo: () => null } : { getCertFromKeyInfo: SignedXml.getCertFromKeyInfo },
  )
  signed.loadSignature(signatures[0] as Element)
  const references = signed.getReferences()
  const id = root.getAttribute('ID')
  const uri = references[0]?.uri ?? ''
  if (references.length !== 1 || !(uri === '' || (id && uri === `#${id}`))) throw new Error('the metadata signature does not cover the whole document')
  if (id && (select(`//*[@ID='${id.replaceAll("'", '')}']`, document as unknown as Node) as Node[]).length !== 1) {
    throw new Error('the metadata has two elements with the signed ID')
  }
  let valid: boolean
  try {
    valid = signed.checkSignature(xml)
  } catch (error) {
    throw new Error(`the metadata signature does not verify (${error instanceof Error ? error.message : String(error)})`, { cause: error })
  }
  if (!valid) throw new Error('the metadata signature does not verify')
  if (trust.kind === 'fingerprint') {
    const keyInfo = (select('ds:KeyInfo', signatures[0] as Element) as Node[])[0]
    const pem = SignedXml.getCertFromKeyInfo(keyInfo ?? null)
    const fingerprint = pem ? normalizeFingerprint(new X509Certificate(pem).fingerprint256) : undefined
    if (fingerprint !== trust.sha256) throw new Error('the metadata is signed by a certificate whose fingerprint is not the configured one')
  }
  const [content] = signed.getSignedReferences()
  if (content === undefined) throw new Error('the metadata signature covers nothing')
  return content
}
