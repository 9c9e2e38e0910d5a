import { Type } from '@sinclair/typebox'

export const PageQuery = Type.Object(
  { lang: Type.Optional(Type.String({ maxLength: 35, description: 'en or da (default: the first language of Accept-Language)' })) },
  { additionalProperties: true },
)

export const SignInBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 200, description: "the app's API key (checked once; never kept by the browser)" }) },
  { additionalProperties: true },
)

export const SessionResponse = Type.Object({
  session: Type.Object({
    app: Type.Object({ id: Type.String(), name: Type.Optional(Type.String()) }),
    expires: Type.String({ format: 'date-time' }),
    csrfToken: Type.String({ description: 'send it in X-CSRF-Token with every POST, PUT and DELETE made with the session cookie' }),
  }),
})
