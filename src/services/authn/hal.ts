import { type Static, type TSchema, Type } from '@sinclair/typebox'
import type { PublicEpersonRow } from './modules/epersons/epersons.repository.ts'
import type { GroupRow } from './modules/epersons/epersons.table.ts'

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

const MetadataValueSchema = Type.Object({
  value: Type.String(),
  language: Type.Null(),
  authority: Type.Null(),
  confidence: Type.Integer(),
  place: Type.Integer(),
})
const MetadataSchema = Type.Record(Type.String(), Type.Array(MetadataValueSchema))

export const EpersonSchema = Type.Object({
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  handle: Type.Null(),
  metadata: MetadataSchema,
  netid: Type.Null(),
  lastActive: nullable(Type.String()),
  canLogIn: Type.Boolean(),
  email: Type.String(),
  requireCertificate: Type.Boolean(),
  selfRegistered: Type.Boolean(),
  type: Type.Literal('eperson'),
  _links: Type.Object({ groups: LinkSchema, self: LinkSchema }),
})

export const GroupSchema = Type.Object({
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  handle: Type.Null(),
  permanent: Type.Boolean(),
  metadata: MetadataSchema,
  type: Type.Literal('group'),
  _links: Type.Object({ self: LinkSchema, subgroups: LinkSchema, epersons: LinkSchema }),
})

export const PageInfoSchema = Type.Object({
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

function metadataValue(value: string) {
  return { value, language: null, authority: null, confidence: -1, place: 0 }
}

export function toEpersonResponse(base: string, row: PublicEpersonRow) {
  const metadata: Record<string, ReturnType<typeof metadataValue>[]> = {}
  if (row.first_name) metadata['eperson.firstname'] = [metadataValue(row.first_name)]
  if (row.last_name) metadata['eperson.lastname'] = [metadataValue(row.last_name)]
  const self = `${base}/eperson/epersons/${row.uuid}`
  return {
    id: row.uuid,
    uuid: row.uuid,
    name: row.email,
    handle: null,
    metadata,
    netid: null,
    lastActive: row.last_active,
    canLogIn: row.can_log_in === 1,
    email: row.email,
    requireCertificate: false,
    selfRegistered: false,
    type: 'eperson' as const,
    _links: { groups: { href: `${self}/groups` }, self: { href: self } },
  }
}

export function toGroupResponse(base: string, row: GroupRow) {
  const self = `${base}/eperson/groups/${row.uuid}`
  return {
    id: row.uuid,
    uuid: row.uuid,
    name: row.name,
    handle: null,
    permanent: row.permanent === 1,
    metadata: { 'dc.title': [metadataValue(row.name)] },
    type: 'group' as const,
    _links: { self: { href: self }, subgroups: { href: `${self}/subgroups` }, epersons: { href: `${self}/epersons` } },
  }
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
