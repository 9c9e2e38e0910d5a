import { type Static, Type } from '@sinclair/typebox'

export const PageQuery = Type.Object(
  { lang: Type.Optional(Type.String({ maxLength: 35, description: 'en or da (default: the first language of Accept-Language)' })) },
  { additionalProperties: true },
)

export const SignInBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 200, description: "the app's API key (checked once; never kept by the browser)" }) },
  { additionalProperties: true },
)

export const LinkRequestBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254, description: 'the e-mail address the merchant user was invited with' }),
    lang: Type.Optional(Type.String({ maxLength: 35, description: 'en or da: the language of the e-mail and of the page the link opens' })),
  },
  { additionalProperties: true },
)

export const LinkRequestResponse = Type.Object({
  linkLifetimeMinutes: Type.Integer({ description: 'how long a link sent now works (the answer is the same whether or not a link was sent)' }),
})

export const FollowLinkBody = Type.Object(
  { token: Type.String({ minLength: 20, maxLength: 200, description: 'the token after #sign-in= in the e-mailed link' }) },
  { additionalProperties: true },
)

export const SessionResponse = Type.Object({
  session: Type.Object({
    app: Type.Optional(Type.Object({ id: Type.String(), name: Type.Optional(Type.String()) }, { description: 'signed in with this app\'s key (operators)' })),
    user: Type.Optional(Type.Object({ id: Type.String(), email: Type.String() }, { description: 'signed in as this merchant user (e-mailed link)' })),
    expires: Type.String({ format: 'date-time' }),
    csrfToken: Type.String({ description: 'send it in X-CSRF-Token with every POST, PUT and DELETE made with the session cookie' }),
  }),
})

/** A merchant user's passkey as the dashboard shows it (never its public key or counter). */
const PasskeySchema = Type.Object({
  id: Type.String({ description: 'the credential id (base64url)' }),
  name: Type.String(),
  created: Type.String({ format: 'date-time' }),
  lastUsed: Type.Optional(Type.String({ format: 'date-time', description: 'the last sign-in with it; absent until the first' })),
})
export type PasskeyDto = Static<typeof PasskeySchema>

export const PasskeyResponse = Type.Object({ passkey: PasskeySchema })

export const PasskeysResponse = Type.Object({
  passkeys: Type.Array(PasskeySchema, { description: 'oldest first (a user can add 20 at most)' }),
})

export const PasskeyParams = Type.Object({
  passkeyId: Type.String({ minLength: 1, maxLength: 1400, pattern: '^[A-Za-z0-9_-]+$', description: 'the credential id (base64url)' }),
})
