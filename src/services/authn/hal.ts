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
  return pageOf(name, items.slice(page * size, page * size + size), items.length, self, page, size)
}

/** A page of `total` items, of which `slice` is page number `page` (read with LIMIT/OFFSET). */
export function pageOf<Name extends string, T>(name: Name, slice: T[], total: number, self: string, page: number, size: number) {
  return {
    _embedded: { [name]: slice } as Record<Name, T[]>,
    page: { number: page, size, totalPages: Math.ceil(total / size), totalElements: total },
    _links: { self: { href: self } },
  }
}

/** DSpace's paging parameters (`page` from 0, `size`), with the bounds every authn list takes. */
export const ListPageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 0 })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
})
