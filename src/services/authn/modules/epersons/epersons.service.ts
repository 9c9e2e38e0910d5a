import type { Clock } from '../../../../core/clock.ts'
import { isUniqueViolation } from '../../../../core/db/errors.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { hashPassword, verifyPassword } from '../../../../core/security/password.ts'
import type { ModuleDatabase } from '../../db.ts'
import type { SessionsTables } from '../sessions/index.ts'
import type { TokenService } from '../sessions/index.ts'
import { emailTaken, epersonNotFound, groupNotFound, invalidEmail, weakPassword } from './epersons.errors.ts'
import * as repo from './epersons.repository.ts'
import type { EpersonsTables, GroupRow } from './epersons.table.ts'

// A password change, a disabled account or a deletion revokes the eperson's sessions in the same
// transaction, so this service's transactions span the sessions module's table too.
type AuthnDatabase = ModuleDatabase<EpersonsTables & SessionsTables>

export const ADMINISTRATOR_GROUP = 'Administrator'

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/
const MIN_PASSWORD_LENGTH = 8

/** E-mails compare case-insensitively (as in DSpace): they are stored and looked up lower-case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

export interface NewEperson {
  email: string
  password?: string
  admin?: boolean
  firstName?: string
  lastName?: string
  canLogIn?: boolean
}

export function createEpersonsService(deps: { database: AuthnDatabase; clock: Clock; ids: IdGenerator; tokens: TokenService }) {
  const { database, clock, ids, tokens } = deps
  const db = database.db

  async function ensureGroup(name: string, permanent = false): Promise<GroupRow> {
    const existing = await repo.findGroupByName(db, name)
    if (existing) return existing
    const row: GroupRow = { uuid: ids.uuid(), name, permanent: permanent ? 1 : 0, created_at: clock.now().toISOString() }
    try {
      await repo.insertGroup(db, row)
      return row
    } catch (error) {
      // Another instance created it at the same moment.
      if (!isUniqueViolation(error)) throw error
      const winner = await repo.findGroupByName(db, name)
      if (!winner) throw error
      return winner
    }
  }

  async function requireByEmail(email: string): Promise<repo.PublicEpersonRow> {
    const found = await repo.findEpersonByEmail(db, normalizeEmail(email))
    if (!found) throw epersonNotFound(`with e-mail ${normalizeEmail(email)}`)
    return found
  }

  function checkPassword(password: string): void {
    if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) throw weakPassword()
  }

  return {
    ensureGroup,
    requireByEmail,

    findByUuid: (uuid: string) => repo.findEpersonByUuid(db, uuid),
    findByEmail: (email: string) => repo.findEpersonByEmail(db, normalizeEmail(email)),
    /** The password hash and login flag of an already-normalised e-mail, for the login check only. */
    findCredentials: (normalizedEmail: string) => repo.findCredentialsByEmail(db, normalizedEmail),
    findGroup: (uuid: string) => repo.findGroupByUuid(db, uuid),
    findGroupByName: (name: string) => repo.findGroupByName(db, name),
    groupsByUuids: (uuids: readonly string[]) => repo.findGroupsByUuids(db, uuids),
    isMember: (epersonUuid: string, groupUuid: string) => repo.isMemberOfGroup(db, epersonUuid, groupUuid),
    isAdmin: (epersonUuid: string) => repo.isMemberOfGroupNamed(db, epersonUuid, ADMINISTRATOR_GROUP),
    list: (limit: number, afterEmail?: string) => repo.listEpersons(db, limit, afterEmail),

    async create(input: NewEperson): Promise<repo.PublicEpersonRow> {
      const email = normalizeEmail(input.email)
      if (!EMAIL_PATTERN.test(email)) throw invalidEmail(input.email)
      if (input.password !== undefined) checkPassword(input.password)
      const passwordHash = input.password === undefined ? null : await hashPassword(input.password)
      const admins = input.admin ? await ensureGroup(ADMINISTRATOR_GROUP, true) : undefined
      const row = {
        uuid: ids.uuid(),
        email,
        password_hash: passwordHash,
        can_log_in: input.canLogIn === false ? 0 : 1,
        first_name: input.firstName ?? null,
        last_name: input.lastName ?? null,
        created_at: clock.now().toISOString(),
        last_active: null,
      }
      try {
        await withTransaction(database, async (trx) => {
          await repo.insertEperson(trx, row)
          if (admins) await repo.addMember(trx, admins.uuid, row.uuid)
        })
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken(email)
        throw error
      }
      const { password_hash: _hidden, ...visible } = row
      return visible
    },

    /** Sets a new password and ends every session of the account. */
    async setPassword(uuid: string, password: string): Promise<void> {
      checkPassword(password)
      const passwordHash = await hashPassword(password)
      await withTransaction(database, async (trx) => {
        if (!(await repo.updateEperson(trx, uuid, { password_hash: passwordHash }))) throw epersonNotFound(uuid)
        await tokens.revokeAll(uuid, trx)
      })
      tokens.evictEperson(uuid)
    },

    async checkCurrentPassword(uuid: string, password: string): Promise<boolean> {
      const row = await repo.findPasswordHash(db, uuid)
      return verifyPassword(password, row?.password_hash)
    },

    /** Enables or disables an account; disabling ends every session of it. */
    async setCanLogIn(uuid: string, canLogIn: boolean): Promise<void> {
      await withTransaction(database, async (trx) => {
        if (!(await repo.updateEperson(trx, uuid, { can_log_in: canLogIn ? 1 : 0 }))) throw epersonNotFound(uuid)
        if (!canLogIn) await tokens.revokeAll(uuid, trx)
      })
      tokens.evictEperson(uuid)
    },

    async remove(uuid: string): Promise<void> {
      if (!(await repo.deleteEperson(db, uuid))) throw epersonNotFound(uuid)
      tokens.evictEperson(uuid)
    },

    async addMember(groupName: string, email: string): Promise<{ group: GroupRow; eperson: repo.PublicEpersonRow; added: boolean }> {
      const group = await repo.findGroupByName(db, groupName)
      if (!group) throw groupNotFound(`named ${groupName}`)
      const eperson = await requireByEmail(email)
      const added = await repo.addMember(db, group.uuid, eperson.uuid)
      return { group, eperson, added }
    },

    async touchLastActive(uuid: string): Promise<void> {
      await repo.updateEperson(db, uuid, { last_active: clock.now().toISOString() })
    },

    /**
     * Makes sure the configured administrator exists and is in the Administrator group. An
     * existing account keeps its password: resetting it on every start would also end all its sessions.
     */
    async ensureAdministrator(email: string, password: string | undefined): Promise<void> {
      const admins = await ensureGroup(ADMINISTRATOR_GROUP, true)
      let eperson = await repo.findEpersonByEmail(db, normalizeEmail(email))
      if (!eperson) {
        if (password === undefined) throw new Error('AUTHN_ADMIN_PASSWORD is required to create the administrator named by AUTHN_ADMIN_EMAIL')
        try {
          eperson = await this.create({ email, password, admin: true })
        } catch (error) {
          eperson = await repo.findEpersonByEmail(db, normalizeEmail(email))
          if (!eperson) throw error
        }
      }
      await repo.addMember(db, admins.uuid, eperson.uuid).catch((error: unknown) => {
        if (!isUniqueViolation(error)) throw error
      })
    },
  }
}

export type EpersonsService = ReturnType<typeof createEpersonsService>
