import type { IpGroupRule } from '../../config.ts'
import type { GroupRow } from '../epersons/index.ts'
import type { EpersonsService } from '../epersons/index.ts'
import { type Address, inRanges } from './client-address.ts'

/**
 * Special groups: memberships granted for one request (IP ranges) or one login (the method's
 * groups, carried in the token's `sg`). Configured groups are created at start if missing and
 * their rows are kept in memory, so computing a request's groups costs no query.
 */
export async function createSpecialGroupsService(deps: {
  epersons: EpersonsService
  ipGroups: readonly IpGroupRule[]
  methodGroups: Record<string, readonly string[]>
}) {
  const known = new Map<string, GroupRow>()
  const ipRules: Array<{ group: GroupRow; rule: IpGroupRule }> = []
  for (const rule of deps.ipGroups) {
    const group = await deps.epersons.ensureGroup(rule.name)
    known.set(group.uuid, group)
    ipRules.push({ group, rule })
  }
  const byMethod = new Map<string, string[]>()
  for (const [method, names] of Object.entries(deps.methodGroups)) {
    const uuids: string[] = []
    for (const name of names) {
      const group = await deps.epersons.ensureGroup(name)
      known.set(group.uuid, group)
      uuids.push(group.uuid)
    }
    byMethod.set(method, uuids)
  }

  return {
    hasAddressRules: ipRules.length > 0,

    /** Groups granted to a client address; recomputed on every request, never put in a token. */
    forAddress(address: Address | undefined): string[] {
      if (!address) return []
      return ipRules.filter(({ rule }) => inRanges(address, rule.ranges)).map(({ group }) => group.uuid)
    },

    /** Groups a login method grants (the token's `sg`). */
    forMethod(method: string): string[] {
      return byMethod.get(method) ?? []
    },

    /** Group rows for uuids, from memory when configured, else from the database. */
    async describe(uuids: readonly string[]): Promise<GroupRow[]> {
      const rows: GroupRow[] = []
      const missing: string[] = []
      for (const uuid of uuids) {
        const row = known.get(uuid)
        if (row) rows.push(row)
        else missing.push(uuid)
      }
      if (missing.length > 0) rows.push(...(await deps.epersons.groupsByUuids(missing)))
      return rows.sort((a, b) => a.name.localeCompare(b.name))
    },
  }
}

export type SpecialGroupsService = Awaited<ReturnType<typeof createSpecialGroupsService>>
