import { Type } from '@sinclair/typebox'

/** The error body of routes that belong to no service (health, docs, unknown paths). */
export const CoreErrorSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      requestId: Type.String(),
      details: Type.Optional(Type.Unknown()),
    }),
  },
  { $id: 'CoreError' },
)
