import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { Clock } from '../../../../core/clock.ts'
import { isUniqueViolation } from '../../../../core/db/errors.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import { hashSecretToken } from '../../../../core/security/secret-token.ts'
import { CEREMONY_TIMEOUT_MS, creationOptions, type RelyingParty, requestOptions, signedChallenge, type StoredCredential, verifyAssertion, verifyCreation } from '../../../../core/security/webauthn.ts'
import { fieldError, notFound } from '../../http/errors.ts'
import type { DashboardChallengesTable, DashboardPasskeysTable, PaymentsDb } from '../../tables.ts'
import { findMemberUser } from './dashboard.repository.ts'
import type { PasskeyDto } from './dashboard.schemas.ts'
import type { DashboardService, DashboardUser } from './dashboard.service.ts'
import * as repo from './passkeys.repository.ts'

const MAX_PASSKEYS = 20
const RP_NAME = 'Triad Payments'

function toPasskeyDto(row: DashboardPasskeysTable): PasskeyDto {
  return { id: row.id, name: row.name, created: row.created, ...(row.last_used === null ? {} : { lastUsed: row.last_used }) }
}

function credentialOf(row: DashboardPasskeysTable): StoredCredential {
  return { id: row.id, publicKey: row.public_key, counter: row.counter, transports: JSON.parse(row.transports) as AuthenticatorTransport[] }
}

/**
 * Passkeys of merchant users (issue 30), with the rules the authn service's passkeys follow
 * (core/security/webauthn.ts): a user signed in (by an e-mailed link) registers one; later it
 * signs them in without e-mail. The ceremonies' challenges live in the database (hashed, used
 * once), so any instance verifies.
 */
export function createDashboardPasskeys(deps: { db: PaymentsDb; clock: Clock; sessions: DashboardService }) {
  const { db, clock } = deps

  async function remember(challenge: string, purpose: DashboardChallengesTable['purpose'], userId: string | null): Promise<void> {
    const now = clock.now()
    await repo.deleteExpiredChallenges(db, now.toISOString())
    await repo.insertChallenge(db, { challenge_hash: hashSecretToken(challenge), purpose, user_id: userId, expires: new Date(now.getTime() + CEREMONY_TIMEOUT_MS).toISOString() })
  }

  /** The challenge of a ceremony started here for this purpose (and user), used once and unexpired. */
  async function recall(clientDataJSON: string, purpose: DashboardChallengesTable['purpose'], userId: string | null): Promise<string | undefined> {
    const challenge = signedChallenge(clientDataJSON)
    const row = challenge ? await repo.takeChallenge(db, hashSecretToken(challenge)) : undefined
    if (!row || row.purpose !== purpose || row.user_id !== userId || row.expires <= clock.now().toISOString()) return undefined
    return challenge
  }

  const refused = () => coreError('unauthorized', 'The passkey did not sign you in: it is unknown here, its user has no merchant any more, or the ceremony expired. Sign in with an e-mailed link.')

  return {
    async registrationOptions(user: DashboardUser, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const existing = await repo.listPasskeysOf(db, user.id)
      if (existing.length >= MAX_PASSKEYS) throw coreError('conflict', `At most ${MAX_PASSKEYS} passkeys per user`)
      const options = await creationOptions({ ...rp, rpName: RP_NAME }, { id: user.id, name: user.email }, existing.map(credentialOf))
      await remember(options.challenge, 'registration', user.id)
      return options
    },

    /** Verifies the browser's answer to registrationOptions and keeps the passkey. */
    async register(user: DashboardUser, response: RegistrationResponseJSON, name: string | undefined, rp: RelyingParty) {
      const challenge = await recall(response.response.clientDataJSON, 'registration', user.id)
      if (!challenge) throw fieldError('credential', 'answers an unknown, used or expired passkey challenge: ask for new registration options')
      let created: Awaited<ReturnType<typeof verifyCreation>>
      try {
        created = await verifyCreation(response, challenge, rp)
      } catch (error) {
        throw fieldError('credential', `could not be verified: ${(error as Error).message}`)
      }
      const row: DashboardPasskeysTable = {
        id: created.id,
        user_id: user.id,
        name: (name ?? '').trim() || 'Passkey',
        public_key: created.publicKey,
        counter: created.counter,
        transports: JSON.stringify(created.transports),
        created: clock.now().toISOString(),
        last_used: null,
      }
      try {
        await repo.insertPasskey(db, row)
      } catch (error) {
        if (isUniqueViolation(error)) throw coreError('conflict', 'This passkey is already registered')
        throw error
      }
      return toPasskeyDto(row)
    },

    /** The user's own passkeys, oldest first (at most MAX_PASSKEYS exist). */
    async list(user: DashboardUser): Promise<PasskeyDto[]> {
      return (await repo.listPasskeysOf(db, user.id)).map(toPasskeyDto)
    },

    /**
     * Removes one of the user's passkeys: it signs nobody in any more. Another user's passkey is
     * the same 404 as an unknown one. Sessions it started stay until they end or are signed out.
     */
    async remove(user: DashboardUser, id: string): Promise<void> {
      if (!(await repo.deletePasskeyOf(db, user.id, id))) throw notFound('Passkey')
    },

    async loginOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const options = await requestOptions(rp)
      await remember(options.challenge, 'login', null)
      return options
    },

    /** A new session for the user a login assertion proves; every failure is the same 401. */
    async signIn(response: AuthenticationResponseJSON, rp: RelyingParty) {
      const challenge = await recall(response.response.clientDataJSON, 'login', null)
      const passkey = challenge ? await repo.findPasskey(db, response.id) : undefined
      if (!challenge || !passkey) throw refused()
      // The user handle (the user id given at registration) must name the passkey's owner.
      const newCounter = await verifyAssertion(response, challenge, rp, credentialOf(passkey), passkey.user_id)
      if (newCounter === undefined || !(await repo.recordPasskeyUse(db, passkey.id, passkey.counter, newCounter, clock.now().toISOString()))) throw refused()
      const user = await findMemberUser(db, passkey.user_id)
      if (!user) throw refused()
      return deps.sessions.startUserSession(user)
    },
  }
}

export type DashboardPasskeys = ReturnType<typeof createDashboardPasskeys>
