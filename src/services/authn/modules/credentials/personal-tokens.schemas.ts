import { Type } from '@sinclair/typebox'
import { LinkSchema, nullable, pageSchema } from '../../hal.ts'
import { type PersonalTokenRow, TOKEN_SCOPES, type TokenScope } from '../personal-tokens/index.ts'

const ScopeSchema = Type.Union(
  TOKEN_SCOPES.map((scope) => Type.Literal(scope)),
  { description: '`read`: GET and HEAD only; `full`: everything the owner may do, except managing credentials and acting on behalf of someone' },
)

export const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the token is for' }),
    expiresAt: Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601 date-time, in the future and at most 366 days away' }),
    scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: 2, uniqueItems: true }),
  },
  { additionalProperties: false },
)

export const PersonalTokenSchema = Type.Object({
  id: Type.String(),
  type: Type.Literal('personalaccesstoken'),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  tokenHint: Type.String({ description: 'The prefix and last four characters, to tell tokens apart' }),
  createdAt: Type.String(),
  expiresAt: Type.String(),
  lastUsedAt: nullable(Type.String({ description: 'To within a minute' })),
  revokedAt: nullable(Type.String()),
  _links: Type.Object({ self: LinkSchema, eperson: LinkSchema }),
})

export const CreatedTokenSchema = Type.Object({
  ...PersonalTokenSchema.properties,
  token: Type.String({ description: 'The secret: shown in this response only; send it as `Authorization: Bearer <token>`' }),
})

export const PersonalTokensPage = pageSchema('personalaccesstokens', PersonalTokenSchema)

/** `full` covers `read`: a token asked for with both is a full one. */
export function scopeOf(scopes: readonly TokenScope[]): TokenScope {
  return scopes.includes('full') ? 'full' : 'read'
}

export function toTokenResponse(base: string, row: PersonalTokenRow) {
  return {
    id: row.id,
    type: 'personalaccesstoken' as const,
    name: row.name,
    scopes: [row.scope],
    tokenHint: row.token_hint,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    _links: { self: { href: `${base}/authn/tokens/${row.id}` }, eperson: { href: `${base}/eperson/epersons/${row.eperson_uuid}` } },
  }
}
