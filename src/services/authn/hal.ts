import { type Static, type TSchema, Type } from '@sinclair/typebox'

export const HAL_CONTENT_TYPE = 'application/hal+json;charset=UTF-8'

/**
 * `T | null` for response schemas, as `nullable` rather than `anyOf`: the serializer picks an
 * `anyOf` branch by validating the value against each one, on every response.
 */
export function nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })
}

export const LinkSchema = Type.Object({ href: Type.String() })

export const DspaceErrorSchema = Type.Object(
  {
    timestamp: Type.String(),
    status: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    path: Type.String(),
  },
  { description: "DSpace's (Spring Boot's) error body" },
)

/**
 * A response without a body (204, 302, or a token carried in a header): documented as `null`
 * as before, typed as no payload so handlers call `reply.send()` with nothing.
 */
export function noBody(options: { description?: string } = {}) {
  return Type.Unsafe<undefined>(Type.Null(options))
}

/** Error responses for a route's schema: one entry per status it can return. */
export function errorResponses(...statuses: number[]): Record<number, typeof DspaceErrorSchema> {
  return Object.fromEntries(statuses.map((status) => [status, DspaceErrorSchema]))
}

const PageInfoSchema = Type.Object({
  number: Type.Integer(),
  size: Type.Integer(),
  totalPages: Type.Integer(),
  totalElements: Type.Integer(),
})

/** A HAL page whose items sit under `_embedded.<name>`. */
export function pageSchema<T extends TSchema>(name: string, item: T) {
  return Type.Object({
    _embedded: Type.Optional(Type.Object({ [name]: Type.Array(item) })),
    page: PageInfoSchema,
    _links: Type.Object({ self: LinkSchema }),
  })
}

/** A page over an in-memory list (special groups: a handful, bounded by configuration). */
export function toPage<T>(name: string, items: T[], self: string, page: number, size: number) {
  const slice = items.slice(page * size, page * size + size)
  return {
    ...(slice.length > 0 ? { _embedded: { [name]: slice } } : { _embedded: { [name]: [] } }),
    page: { number: page, size, totalPages: Math.ceil(items.length / size), totalElements: items.length },
    _links: { self: { href: self } },
  }
}
