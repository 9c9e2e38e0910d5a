import { type Static, Type } from '@sinclair/typebox'

export const CreateAppBody = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 200, description: 'shown instead of the key for third-party apps' })) },
  { additionalProperties: true },
)

const AppSchema = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  key: Type.String({ description: 'the API key (a UUID); shown only in this response' }),
})

export const CreateAppResponse = Type.Object({ app: AppSchema })

const IdentitySchema = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  created: Type.String({ format: 'date-time' }),
})

export const IdentityResponse = Type.Object({ identity: IdentitySchema })

export type Identity = Static<typeof IdentitySchema>
