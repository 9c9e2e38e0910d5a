import { Type } from '@sinclair/typebox'
import { LinkSchema, nullable, pageSchema } from '../../hal.ts'
import type { PasskeyRow } from '../passkeys/index.ts'

const Base64Url = (maxLength: number) => Type.String({ pattern: '^[A-Za-z0-9_-]*$', maxLength })

/**
 * The browser's PublicKeyCredential as JSON (`credential.toJSON()`, or @simplewebauthn/browser's
 * output). Only the shape is checked here; @simplewebauthn/server verifies every byte.
 */
const CredentialBase = {
  id: Base64Url(1400),
  rawId: Base64Url(1400),
  type: Type.Literal('public-key'),
  clientExtensionResults: Type.Object({}, { additionalProperties: true }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
}

export const RegisterPasskeyBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 100, description: 'A label for the list, such as "Laptop"' })),
  credential: Type.Object(
    {
      ...CredentialBase,
      response: Type.Object(
        {
          clientDataJSON: Base64Url(8192),
          attestationObject: Base64Url(65536),
          transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
        },
        { additionalProperties: true },
      ),
    },
    { additionalProperties: true },
  ),
})

export const PasskeyLoginBody = Type.Object({
  credential: Type.Object(
    {
      ...CredentialBase,
      response: Type.Object(
        {
          clientDataJSON: Base64Url(8192),
          authenticatorData: Base64Url(8192),
          signature: Base64Url(8192),
          userHandle: Type.Optional(Base64Url(1024)),
        },
        { additionalProperties: true },
      ),
    },
    { additionalProperties: true },
  ),
})

export const CeremonyOptionsSchema = Type.Object(
  { challenge: Type.String(), timeout: Type.Optional(Type.Integer()) },
  { additionalProperties: true, description: "WebAuthn options as JSON: pass them to the browser's navigator.credentials (PublicKeyCredential.parse…OptionsFromJSON)" },
)

export const PasskeySchema = Type.Object({
  id: Type.String({ description: 'The credential id (base64url)' }),
  type: Type.Literal('passkey'),
  name: Type.String(),
  deviceType: Type.String({ description: '`singleDevice`, or `multiDevice` for a synced passkey' }),
  backedUp: Type.Boolean(),
  transports: Type.Array(Type.String()),
  createdAt: Type.String(),
  lastUsedAt: nullable(Type.String()),
  _links: Type.Object({ self: LinkSchema, eperson: LinkSchema }),
})

export const PasskeysPage = pageSchema('passkeys', PasskeySchema)

export function toPasskeyResponse(base: string, row: PasskeyRow) {
  return {
    id: row.id,
    type: 'passkey' as const,
    name: row.name,
    deviceType: row.device_type,
    backedUp: row.backed_up === 1,
    transports: JSON.parse(row.transports) as string[],
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    _links: { self: { href: `${base}/authn/passkeys/${row.id}` }, eperson: { href: `${base}/eperson/epersons/${row.eperson_uuid}` } },
  }
}
