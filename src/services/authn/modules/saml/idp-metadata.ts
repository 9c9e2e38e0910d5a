import { DOMParser } from '@xmldom/xmldom'
import { readFile } from 'node:fs/promises'
import xpath from 'xpath'
import type { Clock } from '../../../../core/clock.ts'
import type { SamlProviderConfig } from '../../saml-config.ts'
import { verifiedMetadata } from './metadata-signature.ts'

/** What Triad needs to know of an identity provider. */
export interface IdpDescription {
  entityId: string
  /** The SingleSignOnService location for the binding the provider is configured with (HTTP-Redirect by default). */
  ssoUrl: string
  /** Base64 DER certificates the provider signs with (several during a rollover). */
  certificates: string[]
  /** Its SingleLogoutService for the HTTP-Redirect binding, where a LogoutResponse goes; absent when it has none. */
  sloUrl: string | undefined
}

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const DS = 'http://www.w3.org/2000/09/xmldsig#'
const BINDING_PREFIX = 'urn:oasis:names:tc:SAML:2.0:bindings:'
const REDIRECT_BINDING = `${BINDING_PREFIX}HTTP-Redirect`
const select = xpath.useNamespaces({ md: MD, ds: DS })
const FETCH_TIMEOUT_MS = 5_000
const MAX_METADATA_BYTES = 5 * 1024 * 1024

/**
 * Reads an identity provider's SAML metadata: its EntityDescriptor (the one whose entityID is
 * `entityId` when the document is an aggregate), the SSO location for `binding`, and its
 * signing certificates (KeyDescriptors with use="signing" or no use). Metadata past its
 * `validUntil` is refused (SAML metadata 2.0, 2.3.1): an old copy must not bring back a key
 * the provider or its federation has since withdrawn.
 */
function parseIdpMetadata(xml: string, provider: SamlProviderConfig, now: Date): IdpDescription {
  const { entityId, authnRequestBinding: binding } = provider
  const document = new DOMParser({ onError: () => {} }).parseFromString(xml, 'text/xml')
  const validUntil = document.documentElement?.getAttribute('validUntil')
  if (validUntil && !(Date.parse(validUntil) > now.getTime())) throw new Error(`the metadata expired (validUntil ${validUntil})`)
  const descriptors = select('//md:EntityDescriptor[md:IDPSSODescriptor]', document as unknown as Node) as Element[]
  const descriptor = entityId ? descriptors.find((node) => node.getAttribute('entityID') === entityId) : descriptors.length === 1 ? descriptors[0] : undefined
  if (!descriptor) throw new Error(entityId ? `no identity provider ${entityId} in the metadata` : 'the metadata must describe exactly one identity provider (or set "entityId")')
  const sso = select(`md:IDPSSODescriptor/md:SingleSignOnService[@Binding='${BINDING_PREFIX}${binding}']/@Location`, descriptor) as Attr[]
  const certs = select("md:IDPSSODescriptor/md:KeyDescriptor[not(@use) or @use='signing']/ds:KeyInfo/ds:X509Data/ds:X509Certificate", descriptor) as Element[]
  const certificates = certs.map((node) => (node.textContent ?? '').replace(/\s+/g, '')).filter(Boolean)
  const slo = select(`md:IDPSSODescriptor/md:SingleLogoutService[@Binding='${REDIRECT_BINDING}']/@Location`, descriptor) as Attr[]
  const ssoUrl = sso[0]?.value
  if (!ssoUrl) throw new Error(`the identity provider has no SingleSignOnService for the ${binding} binding`)
  if (certificates.length === 0) throw new Error('the identity provider publishes no signing certificate')
  return { entityId: descriptor.getAttribute('entityID') ?? '', ssoUrl, certificates, sloUrl: slo[0]?.value }
}

async function readMetadata(source: NonNullable<SamlProviderConfig['metadata']>): Promise<string> {
  if (source.kind === 'file') return readFile(source.path, 'utf8')
  const response = await fetch(source.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' })
  if (!response.ok) throw new Error(`metadata ${source.url} answered ${response.status}`)
  const text = await response.text()
  if (text.length > MAX_METADATA_BYTES) throw new Error(`metadata ${source.url} is larger than ${MAX_METADATA_BYTES} bytes`)
  return text
}

export interface IdpMetadataSource {
  /** The provider as last read (re-read when older than the refresh interval). */
  current(): Promise<IdpDescription>
  /** Reads the metadata again now (a signature failed: the provider may have rolled its key). */
  reload(): Promise<IdpDescription>
}

/**
 * The provider's description: its metadata (file or URL) with the configured overrides on top,
 * re-read every `refreshMs`. A failed re-read keeps the last good description, so an outage of
 * the provider's metadata server does not stop logins; a reload forced by a signature failure
 * happens at most once a minute.
 */
export function createIdpMetadataSource(provider: SamlProviderConfig, clock: Clock, refreshMs: number, log: (message: string) => void): IdpMetadataSource {
  let last: { at: number; description: IdpDescription } | undefined
  let forcedAt = Number.NEGATIVE_INFINITY

  async function load(): Promise<IdpDescription> {
    const now = clock.now()
    let xml = provider.metadata ? await readMetadata(provider.metadata) : undefined
    if (xml !== undefined && provider.metadataTrust) xml = verifiedMetadata(xml, provider.metadataTrust)
    const fromMetadata = xml === undefined ? undefined : parseIdpMetadata(xml, provider, now)
    const description = {
      entityId: provider.entityId ?? fromMetadata?.entityId ?? '',
      ssoUrl: provider.ssoUrl ?? fromMetadata?.ssoUrl ?? '',
      certificates: provider.certificates ? provider.certificates.map((cert) => cert.replace(/-----[^-]+-----|\s+/g, '')) : (fromMetadata?.certificates ?? []),
      sloUrl: fromMetadata?.sloUrl,
    }
    last = { at: now.getTime(), description }
    return description
  }

  async function loadKeepingLast(): Promise<IdpDescription> {
    try {
      return await load()
    } catch (error) {
      if (!last) throw error
      log(`SAML provider ${provider.id}: metadata could not be read again, keeping the last good copy (${error instanceof Error ? error.message : String(error)})`)
      last = { at: clock.now().getTime(), description: last.description }
      return last.description
    }
  }

  return {
    async current() {
      if (last && clock.now().getTime() - last.at < refreshMs) return last.description
      return loadKeepingLast()
    },
    async reload() {
      const now = clock.now().getTime()
      if (last && now - forcedAt < 60_000) return last.description
      forcedAt = now
      return loadKeepingLast()
    },
  }
}
