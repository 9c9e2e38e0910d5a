import { Type } from '@sinclair/typebox'
import { LinkSchema, nullable } from '../../hal.ts'
import type { PublicEpersonRow } from './epersons.repository.ts'
import type { GroupRow } from './epersons.table.ts'

// DSpace's HAL shapes of an eperson and a group, and the one mapping from a row to each.

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
