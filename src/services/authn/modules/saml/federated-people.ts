import type { Clock } from '../../../../core/clock.ts'
import type { ModuleDatabase } from '../../db.ts'
import { authnErrors } from '../../errors.ts'
import type { EpersonsService } from '../epersons/index.ts'
import { findIdentity, linkIdentity } from './saml.repository.ts'
import type { SamlTables } from './saml.table.ts'

/** What a federated login (SAML assertion, Shibboleth headers) says about the person. */
export interface FederatedPerson {
  email: string | undefined
  givenName: string | undefined
  surname: string | undefined
  persistentId: string | undefined
}

/** True when `values` has `wanted`, or its scoped form (`staff` matches eduPersonScopedAffiliation's `staff@uni.edu`). */
export function hasValue(values: readonly string[], wanted: string): boolean {
  const target = wanted.toLowerCase()
  return values.some((value) => {
    const lower = value.toLowerCase()
    return lower === target || lower.startsWith(`${target}@`)
  })
}

/** Finds (or creates) the eperson a federated login names, and resolves its special groups. */
export function createFederatedPeople(deps: { database: ModuleDatabase<SamlTables>; clock: Clock; epersons: EpersonsService }) {
  const { database, clock, epersons } = deps
  return {
    /**
     * The eperson this person is: by the persistent id stored for `providerId` first (it
     * survives a changed e-mail), then by e-mail, else a new one when `autoRegister` (under
     * `registerWithout`, when the provider released no e-mail and gives the account one of
     * its own). The persistent id is linked to the account at its first login.
     */
    async resolve(providerId: string, who: FederatedPerson, autoRegister: boolean, registerWithout?: string): Promise<string> {
      const linked = who.persistentId ? await findIdentity(database.db, providerId, who.persistentId) : undefined
      let uuid = linked
      if (!uuid && who.email) uuid = (await epersons.findByEmail(who.email))?.uuid
      const address = who.email ?? (who.persistentId ? registerWithout : undefined)
      if (!uuid && address && autoRegister) {
        uuid = (await epersons.create({ email: address, firstName: who.givenName, lastName: who.surname })).uuid
      }
      if (!uuid) throw authnErrors.signOnFailed(new Error('no eperson matches this person and auto-registration is off'))
      if (who.persistentId && !linked) {
        await linkIdentity(database.db, { provider_id: providerId, persistent_id: who.persistentId, eperson_uuid: uuid, created_at: clock.now().toISOString() })
      }
      return uuid
    },

    /** The uuids of groups by name (created when missing), for a login's hand-off. */
    async groups(names: Iterable<string>): Promise<string[]> {
      const uuids: string[] = []
      for (const name of new Set(names)) uuids.push((await epersons.ensureGroup(name)).uuid)
      return uuids
    },
  }
}

export type FederatedPeople = ReturnType<typeof createFederatedPeople>
