import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { readFileSync } from 'node:fs'
import { X509Certificate } from 'node:crypto'

/**
 * The attribute names federations send (SAML2 attribute profile: `urn:oid:` names, the
 * eduPerson and inetOrgPerson schemas), used unless a provider overrides one.
 */
const DEFAULT_SAML_ATTRIBUTES = {
  email: 'urn:oid:0.9.2342.19200300.100.1.3',
  givenName: 'urn:oid:2.5.4.42',
  surname: 'urn:oid:2.5.4.4',
  principalName: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.6',
  affiliation: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.9',
  /** eduPersonTargetedID; SAML2's `pairwise-id` (urn:oasis:names:tc:SAML:attribute:pairwise-id) is tried after it. */
  persistentId: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.10',
} as const

export const PAIRWISE_ID_ATTRIBUTE = 'urn:oasis:names:tc:SAML:attribute:pairwise-id'

/** Who may sign a provider's metadata: a certificate (PEM), or the SHA-256 fingerprint of the one in the signature. */
export type MetadataTrust = { kind: 'certificate'; pem: string } | { kind: 'fingerprint'; sha256: string }

/** `AB:CD:…`, `abcd…`: the same fingerprint. */
export const normalizeFingerprint = (value: string) => value.replaceAll(':', '').toLowerCase()

const AttributeName = Type.String({ minLength: 1 })

const ProviderSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'the id in the URLs (/server/saml2/authenticate/{id})' }),
    name: Type.Optional(Type.String({ minLength: 1 })),
    metadata: Type.Optional(Type.String({ minLength: 1, description: 'the identity provider metadata: an https URL (fetched and refreshed) or a file path' })),
    metadataSigningCertificate: Type.Optional(Type.String({ minLength: 1, description: 'the certificate that must have signed the metadata: PEM, or the path of a PEM file' })),
    metadataSigningFingerprint: Type.Optional(Type.String({ pattern: '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$', description: 'the SHA-256 fingerprint of the certificate that must have signed the metadata' })),
    authnRequestBinding: Type.Optional(Type.Union([Type.Literal('HTTP-Redirect'), Type.Literal('HTTP-POST')])),
    entityId: Type.Optional(Type.String({ minLength: 1 })),
    ssoUrl: Type.Optional(Type.String({ pattern: '^https?://.+' })),
    certificates: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    spEntityId: Type.Optional(Type.String({ minLength: 1 })),
    allowHttp: Type.Optional(Type.Boolean()),
    autoRegister: Type.Optional(Type.Boolean()),
    attributes: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(AttributeName),
          givenName: Type.Optional(AttributeName),
          surname: Type.Optional(AttributeName),
          principalName: Type.Optional(AttributeName),
          affiliation: Type.Optional(AttributeName),
          persistentId: Type.Optional(AttributeName),
        },
        { additionalProperties: false },
      ),
    ),
    groups: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    attributeGroups: Type.Optional(
      Type.Array(
        Type.Object(
          { attribute: AttributeName, value: Type.String({ minLength: 1 }), group: Type.String({ minLength: 1 }) },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
)

type ProviderInput = Static<typeof ProviderSchema>

export interface SamlProviderConfig {
  id: string
  name: string
  /** Where the identity provider's metadata comes from, if anywhere. */
  metadata: { kind: 'url'; url: string } | { kind: 'file'; path: string } | undefined
  /** Who must have signed the metadata; unset: it is taken as read (a file, or https from the provider itself). */
  metadataTrust: MetadataTrust | undefined
  /** How the AuthnRequest travels to the provider. */
  authnRequestBinding: 'HTTP-Redirect' | 'HTTP-POST'
  /** Overrides of what the metadata says (or all of it, without metadata). */
  entityId: string | undefined
  ssoUrl: string | undefined
  certificates: readonly string[] | undefined
  spEntityId: string | undefined
  autoRegister: boolean
  attributes: { [K in keyof typeof DEFAULT_SAML_ATTRIBUTES]: string }
  groups: readonly string[]
  attributeGroups: ReadonlyArray<{ attribute: string; value: string; group: string }>
}

/**
 * AUTHN_SAML_PROVIDERS: a JSON array of identity providers, each with an id and its metadata
 * (URL or file) or, without metadata, its entity id, SSO URL and certificates. Every problem is
 * reported with the provider it belongs to.
 */
export function parseSamlProviders(value: string | undefined): SamlProviderConfig[] {
  if (!value) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw new Error('AUTHN_SAML_PROVIDERS must be a JSON array such as [{"id":"uni","metadata":"https://idp.example.edu/metadata.xml"}]')
  }
  if (!Array.isArray(parsed)) throw new Error('AUTHN_SAML_PROVIDERS must be a JSON array of providers')
  const seen = new Set<string>()
  return parsed.map((item: unknown, index) => {
    if (!Value.Check(ProviderSchema, item)) {
      const problems = [...Value.Errors(ProviderSchema, item)].map((error) => `${error.path || '/'} ${error.message}`)
      throw new Error(`AUTHN_SAML_PROVIDERS[${index}]: ${problems.slice(0, 3).join('; ')}`)
    }
    const input: ProviderInput = item
    if (seen.has(input.id)) throw new Error(`AUTHN_SAML_PROVIDERS: the id ${JSON.stringify(input.id)} is used twice`)
    seen.add(input.id)
    if (!input.metadata && (!input.entityId || !input.ssoUrl || !input.certificates)) {
      throw new Error(`AUTHN_SAML_PROVIDERS: provider ${input.id} needs "metadata", or all of "entityId", "ssoUrl" and "certificates"`)
    }
    if ((input.metadataSigningCertificate || input.metadataSigningFingerprint) && !input.metadata) {
      throw new Error(`AUTHN_SAML_PROVIDERS: provider ${input.id} has a metadata signing certificate but no "metadata"`)
    }
    if (input.metadataSigningCertificate && input.metadataSigningFingerprint) {
      throw new Error(`AUTHN_SAML_PROVIDERS: provider ${input.id}: give "metadataSigningCertificate" or "metadataSigningFingerprint", not both`)
    }
    return {
      id: input.id,
      name: input.name ?? input.id,
      metadata: input.metadata === undefined ? undefined : metadataSource(input.id, input.metadata, input.allowHttp === true),
      metadataTrust: metadataTrust(input),
      authnRequestBinding: input.authnRequestBinding ?? 'HTTP-Redirect',
      entityId: input.entityId,
      ssoUrl: input.ssoUrl,
      certificates: input.certificates,
      spEntityId: input.spEntityId,
      autoRegister: input.autoRegister === true,
      attributes: { ...DEFAULT_SAML_ATTRIBUTES, ...input.attributes },
      groups: input.groups ?? [],
      attributeGroups: input.attributeGroups ?? [],
    }
  })
}

function metadataTrust(input: ProviderInput): MetadataTrust | undefined {
  if (input.metadataSigningFingerprint) return { kind: 'fingerprint', sha256: normalizeFingerprint(input.metadataSigningFingerprint) }
  const given = input.metadataSigningCertificate
  if (!given) return undefined
  let pem: string
  try {
    pem = given.includes('-----BEGIN') ? pemFromEnv(given) : readFileSync(given, 'utf8')
    new X509Certificate(pem)
  } catch (error) {
    throw new Error(`AUTHN_SAML_PROVIDERS: provider ${input.id}: "metadataSigningCertificate" is neither a PEM certificate nor a readable PEM file (${error instanceof Error ? error.message : String(error)})`, { cause: error })
  }
  return { kind: 'certificate', pem }
}

function metadataSource(id: string, metadata: string, allowHttp: boolean): NonNullable<SamlProviderConfig['metadata']> {
  if (/^https?:\/\//i.test(metadata)) {
    // Plain http would let anyone on the path swap the provider's certificates.
    if (metadata.toLowerCase().startsWith('http:') && !allowHttp) {
      throw new Error(`AUTHN_SAML_PROVIDERS: provider ${id} fetches its metadata over plain http; use https (or "allowHttp": true for development)`)
    }
    return { kind: 'url', url: metadata }
  }
  return { kind: 'file', path: metadata }
}

/** A PEM from the environment, where newlines are often written as `\n`. */
export function pemFromEnv(value: string): string {
  return value.replaceAll('\\n', '\n').trim()
}

/** The header names a Shibboleth SP sets by default (attribute-map.xml ids), lower-cased as Node sees them. */
const DEFAULT_SHIBBOLETH_HEADERS = {
  email: 'mail',
  givenName: 'givenname',
  surname: 'sn',
  persistentId: 'persistent-id',
  affiliation: 'affiliation',
} as const

type ShibbolethField = keyof typeof DEFAULT_SHIBBOLETH_HEADERS

/** AUTHN_SHIBBOLETH_HEADERS: `field=Header-Name` pairs overriding the defaults. */
export function parseShibbolethHeaders(value: string | undefined): { [K in ShibbolethField]: string } {
  const headers: { [K in ShibbolethField]: string } = { ...DEFAULT_SHIBBOLETH_HEADERS }
  for (const pair of (value ?? '').split(',').map((item) => item.trim()).filter(Boolean)) {
    const [field = '', header = ''] = pair.split('=').map((part) => part.trim())
    if (!(field in DEFAULT_SHIBBOLETH_HEADERS) || !/^[A-Za-z0-9_-]+$/.test(header)) {
      throw new Error(`AUTHN_SHIBBOLETH_HEADERS: ${JSON.stringify(pair)} must be field=Header-Name with a field among ${Object.keys(DEFAULT_SHIBBOLETH_HEADERS).join(', ')}`)
    }
    headers[field as ShibbolethField] = header.toLowerCase()
  }
  return headers
}

/** AUTHN_SHIBBOLETH_ROLE_GROUPS: `staff=Staff,student=Students` (an affiliation value, the group it grants). */
export function parseRoleGroups(value: string | undefined): Array<{ value: string; group: string }> {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((pair) => {
      const equals = pair.indexOf('=')
      const role = pair.slice(0, equals).trim()
      const group = pair.slice(equals + 1).trim()
      if (equals <= 0 || !role || !group) throw new Error(`AUTHN_SHIBBOLETH_ROLE_GROUPS must look like "staff=Staff,student=Students" (bad item ${JSON.stringify(pair)})`)
      return { value: role, group }
    })
}
