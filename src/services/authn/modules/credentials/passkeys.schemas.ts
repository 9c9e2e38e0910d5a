import { Type } from '@sinclair/typebox'
import { AuthenticationCredentialSchema, RegistrationCredentialSchema } from '../../../../core/http/webauthn.schemas.ts'
import { LinkSchema, nullable, pageSchema } from '../../hal.ts'
import type { PasskeyRow } from '../passkeys/index.ts'

export const RegisterPasskeyBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 100, description: 'A label for the list, such as "Laptop"' })),
  credential: RegistrationCredentialSchema,
})

export const PasskeyLoginBody = Type.Object({ credential: AuthenticationCredentialSchema })

export const PasskeySchema = Type.Object({
  id: Type.String({ description: 'The credential id (base64url)' }),
  type: Type.Literal('passkey'),
  name: Type.String(),
  deviceType: Type.String({ description: '`singleDevice`, or `multiDevice` for a synced passkey' }),
  backedUp: Type.Boolean(),
  transports: Type.Array(Type.String()),
  createdAt: Type.String(),
  lastUsedAt: nullable(Type.String()),
  _links: Type.Object({ self: LinkSchema, eperson: LinkSchema }),
})

export const PasskeysPage = pageSchema('passkeys', PasskeySchema)

export function toPasskeyResponse(base: string, row: PasskeyRow) {
  return {
    id: row.id,
    type: 'passkey' as const,
    name: row.name,
    deviceType: row.device_type,
    backedUp: row.backed_up === 1,
    transports: JSON.parse(row.transports) as string[],
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    _links: { self: { href: `${base}/authn/passkeys/${row.id}` }, eperson: { href: `${base}/eperson/epersons/${row.eperson_uuid}` } },
  }
}
