import { Type } from '@sinclair/typebox'

// WebAuthn on the wire, for every service with passkeys (authn, the payments dashboard).

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

/** A new credential: the browser's answer to creation (registration) options. */
export const RegistrationCredentialSchema = Type.Object(
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
)

/** An assertion: the browser's answer to request (login) options. */
export const AuthenticationCredentialSchema = Type.Object(
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
)

export const CeremonyOptionsSchema = Type.Object(
  { challenge: Type.String(), timeout: Type.Optional(Type.Integer()) },
  { additionalProperties: true, description: "WebAuthn options as JSON: pass them to the browser's navigator.credentials (PublicKeyCredential.parse…OptionsFromJSON)" },
)
