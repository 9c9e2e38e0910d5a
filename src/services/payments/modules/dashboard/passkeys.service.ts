import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { Clock } from '../../../../core/clock.ts'
import { isUniqueViolation } from '../../../../core/db/errors.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import { hashSecretToken } from '../../../../core/security/secret-token.ts'
import { signedChallenge } from '../../../../core/security/webauthn.ts'
import { fieldError } from '../../http/errors.ts'
import type { DashboardChallengesTable, DashboardPasskeysTable, PaymentsDb } from '../../tables.ts'
import { findMemberUser } from './dashboard.repository.ts'
import type { DashboardService, DashboardUser } from './dashboard.service.ts'
import * as repo from './passkeys.repository.ts'

/** Where passkeys are used: the host name they are bound to and the page's origin. */
export interface RelyingParty {
  rpId: string
  origin: string
}

const CEREMONY_TIMEOUT_MS = 5 * 60_000
const MAX_PASSKEYS = 20

function transportsOf(row: DashboardPasskeysTable): AuthenticatorTransport[] {
  return JSON.parse(row.transports) as AuthenticatorTransport[]
}

/**
 * Passkeys of merchant users (issue 30), with @simplewebauthn/server as the authn service uses
 * it: a user signed in (by an e-mailed link) registers one; later it signs them in without
 * e-mail. Discoverable credentials, user verification required, no attestation asked for. The
 * ceremonies' challenges live in the database (hashed, used once), so any instance verifies.
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
      const options = await generateRegistrationOptions({
        rpName: 'Triad Payments',
        rpID: rp.rpId,
        userName: user.email,
        userID: new TextEncoder().encode(user.id),
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: existing.map((row) => ({ id: row.id, transports: transportsOf(row) })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      })
      await remember(options.challenge, 'registration', user.id)
      return options
    },

    /** Verifies the browser's answer to registrationOptions and keeps the passkey. */
    async register(user: DashboardUser, response: RegistrationResponseJSON, name: string | undefined, rp: RelyingParty) {
      const challenge = await recall(response.response.clientDataJSON, 'registration', user.id)
      if (!challenge) throw fieldError('credential', 'answers an unknown, used or expired passkey challenge: ask for new registration options')
      let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>
      try {
        verification = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.rpId, requireUserVerification: true })
      } catch (error) {
        throw fieldError('credential', `could not be verified: ${(error as Error).message}`)
      }
      const info = verification.registrationInfo
      if (!verification.verified || !info) throw fieldError('credential', 'could not be verified')
      const row: DashboardPasskeysTable = {
        id: info.credential.id,
        user_id: user.id,
        name: (name ?? '').trim() || 'Passkey',
        public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        counter: info.credential.counter,
        transports: JSON.stringify(response.response.transports ?? []),
        created: clock.now().toISOString(),
        last_used: null,
      }
      try {
        await repo.insertPasskey(db, row)
      } catch (error) {
        if (isUniqueViolation(error)) throw coreError('conflict', 'This passkey is already registered')
        throw error
      }
      return { id: row.id, name: row.name, created: row.created }
    },

    async loginOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const options = await generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required', timeout: CEREMONY_TIMEOUT_MS })
      await remember(options.challenge, 'login', null)
      return options
    },

    /** A new session for the user a login assertion proves; every failure is the same 401. */
    async signIn(response: AuthenticationResponseJSON, rp: RelyingParty) {
      const challenge = await recall(response.response.clientDataJSON, 'login', null)
      const passkey = challenge ? await repo.findPasskey(db, response.id) : undefined
      if (!challenge || !passkey) throw refused()
      // The user handle (the user id given at registration) must name the passkey's owner.
      const userHandle = response.response.userHandle
      if (userHandle !== undefined && Buffer.from(userHandle, 'base64url').toString('utf8') !== passkey.user_id) throw refused()
      let newCounter: number
      try {
        const verification = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge,
          expectedOrigin: rp.origin,
          expectedRPID: rp.rpId,
          credential: { id: passkey.id, publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')), counter: passkey.counter, transports: transportsOf(passkey) },
          requireUserVerification: true,
        })
        if (!verification.verified) throw refused()
        newCounter = verification.authenticationInfo.newCounter
      } catch {
        throw refused()
      }
      if (!(await repo.recordPasskeyUse(db, passkey.id, passkey.counter, newCounter, clock.now().toISOString()))) throw refused()
      const user = await findMemberUser(db, passkey.user_id)
      if (!user) throw refused()
      return deps.sessions.startUserSession(user)
    },
  }
}

export type DashboardPasskeys = ReturnType<typeof createDashboardPasskeys>
