import { Type } from '@sinclair/typebox'
import { LinkSchema, nullable, pageSchema } from '../../hal.ts'
import type { SessionRow } from '../sessions/index.ts'

export const SessionSchema = Type.Object({
  id: Type.String(),
  type: Type.Literal('session'),
  method: Type.String({ description: 'How the session was started: password, oidc or passkey' }),
  device: nullable(Type.String({ description: 'Browser and system, summarised from the User-Agent of the login' })),
  ip: nullable(Type.String({ description: 'Client address of the login' })),
  createdAt: Type.String({ description: 'First seen: the login' }),
  lastSeenAt: Type.String({ description: 'Last request with one of its tokens, to within a minute' }),
  expiresAt: Type.String({ description: 'Absolute end: refreshes never reach past it' }),
  current: Type.Boolean({ description: 'The session of the token this request was made with' }),
  _links: Type.Object({ self: LinkSchema, eperson: LinkSchema }),
})

export const SessionsPage = pageSchema('sessions', SessionSchema)

/** What a session shows of itself, over HTTP and in the CLI (a session never used again was last seen when made). */
export function sessionFields(row: SessionRow) {
  return {
    id: row.id,
    method: row.method,
    device: row.device,
    ip: row.ip,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at ?? row.created_at,
    expiresAt: row.expires_at,
  }
}

export function toSessionResponse(base: string, row: SessionRow, currentId: string | undefined) {
  const { id, ...fields } = sessionFields(row)
  return {
    id,
    type: 'session' as const,
    ...fields,
    current: row.id === currentId,
    _links: { self: { href: `${base}/authn/sessions/${row.id}` }, eperson: { href: `${base}/eperson/epersons/${row.eperson_uuid}` } },
  }
}
