import { Type } from '@sinclair/typebox'
import { UUID_PATTERN } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { ListPageQuery } from '../../hal.ts'
import type { EpersonsService, PublicEpersonRow } from '../epersons/index.ts'

/** The query of every credentials list: DSpace's paging, and whose list (administrators only). */
export const OwnerQuery = Type.Object({
  ...ListPageQuery.properties,
  eperson: Type.Optional(Type.String({ pattern: UUID_PATTERN.source, description: "whose list (another eperson's: administrators only)" })),
})

/**
 * Whose sessions, tokens or passkeys a list shows: the caller's, or for an administrator the
 * eperson named by `?eperson=` (404 if there is none); anyone else asking about another is 403,
 * as DSpace's authorization search answers.
 */
export async function listOwner(epersons: EpersonsService, caller: PublicEpersonRow, requested: string | undefined): Promise<string> {
  const owner = requested?.toLowerCase() ?? caller.uuid
  if (owner === caller.uuid) return owner
  if (!(await epersons.isAdmin(caller.uuid))) throw authnErrors.accessDenied()
  if (!(await epersons.findByUuid(owner))) throw authnErrors.notFound(`No eperson ${owner}`)
  return owner
}

/** The `self` link of a page of such a list. */
export function listLink(path: string, owner: string, caller: PublicEpersonRow, page: number, size: number): string {
  return `${path}?${new URLSearchParams({ ...(owner !== caller.uuid ? { eperson: owner } : {}), page: String(page), size: String(size) })}`
}
