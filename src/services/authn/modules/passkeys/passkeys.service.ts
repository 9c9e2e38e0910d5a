import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { Clock } from '../../../../core/clock.ts'
import { isUniqueViolation } from '../../../../core/db/errors.ts'
import { hashSecretToken } from '../../../../core/security/secret-token.ts'
import { CEREMONY_TIMEOUT_MS, creationOptions, requestOptions, signedChallenge, type StoredCredential, verifyAssertion, verifyCreation } from '../../../../core/security/webauthn.ts'
import type { AuthnConfig } from '../../config.ts'
import type { ModuleDatabase } from '../../db.ts'
import { authnErrors } from '../../errors.ts'
import type { Actor } from '../audit/index.ts'
import type { PublicEpersonRow } from '../epersons/index.ts'
import * as repo from './passkeys.repository.ts'
import type { PasskeyRow, PasskeysTables } from './passkeys.table.ts'

export const PASSKEY_METHOD = 'passkey'
/** Passkeys per eperson: enough for every device a person owns, few enough to list in one registration's exclude list. */
const MAX_PASSKEYS = 20
const MAX_NAME_LENGTH = 100

type PasskeyConfig = NonNullable<AuthnConfig['passkeys']>
type Purpose = 'registration' | 'login'

function credentialOf(row: PasskeyRow): StoredCredential {
  return { id: row.id, publicKey: row.public_key, counter: Number(row.counter), transports: JSON.parse(row.transports) as AuthenticatorTransport[] }
}

/**
 * Passkeys (WebAuthn, core/security/webauthn.ts): registered by a logged-in eperson, then used
 * to log in without a password.
 */
export function createPasskeysService(deps: { database: ModuleDatabase<PasskeysTables>; clock: Clock; config: PasskeyConfig | undefined }) {
  const { database, clock } = deps
  const db = database.db

  /** The relying party; the ceremonies need it, listing and removing (the command line) do not. */
  function relyingParty(): PasskeyConfig {
    if (!deps.config) throw authnErrors.notFound('Passkeys are not enabled (AUTHN_PASSKEY_RP_ID is unset)')
    return deps.config
  }

  async function remember(challenge: string, purpose: Purpose, epersonUuid: string | null): Promise<void> {
    const now = clock.now()
    await repo.deleteExpiredChallenges(db, now.toISOString())
    await repo.insertChallenge(db, {
      challenge_hash: hashSecretToken(challenge),
      purpose,
      eperson_uuid: epersonUuid,
      expires_at: new Date(now.getTime() + CEREMONY_TIMEOUT_MS).toISOString(),
    })
  }

  /** The challenge of a ceremony this service started, for this purpose (and eperson), used once and unexpired. */
  async function recall(clientDataJSON: string, purpose: Purpose, epersonUuid: string | null): Promise<string | undefined> {
    const challenge = signedChallenge(clientDataJSON)
    const row = challenge ? await repo.takeChallenge(db, hashSecretToken(challenge)) : undefined
    if (!row || row.purpose !== purpose || row.eperson_uuid !== epersonUuid || row.expires_at <= clock.now().toISOString()) return undefined
    return challenge
  }

  async function find(id: string, by: Pick<Actor, 'uuid' | 'admin'>): Promise<PasskeyRow> {
    const row = await repo.findPasskey(db, id)
    if (!row || (row.eperson_uuid !== by.uuid && !by.admin)) throw authnErrors.notFound(`No passkey ${id}`)
    return row
  }

  return {
    async registrationOptions(eperson: PublicEpersonRow): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const config = relyingParty()
      const existing = await repo.listPasskeysOf(db, eperson.uuid, MAX_PASSKEYS, 0)
      if (existing.length >= MAX_PASSKEYS) throw authnErrors.unprocessable(`At most ${MAX_PASSKEYS} passkeys per account; remove one first`)
      const options = await creationOptions(
        config,
        { id: eperson.uuid, name: eperson.email, displayName: [eperson.first_name, eperson.last_name].filter(Boolean).join(' ') || eperson.email },
        existing.map(credentialOf),
      )
      await remember(options.challenge, 'registration', eperson.uuid)
      return options
    },

    /** Verifies the browser's answer to registrationOptions and stores the passkey. */
    async register(eperson: PublicEpersonRow, response: RegistrationResponseJSON, name: string | undefined, by: Actor): Promise<PasskeyRow> {
      const config = relyingParty()
      const label = (name ?? '').trim() || 'Passkey'
      if (label.length > MAX_NAME_LENGTH) throw authnErrors.unprocessable(`The name must be at most ${MAX_NAME_LENGTH} characters long`)
      const challenge = await recall(response.response.clientDataJSON, 'registration', eperson.uuid)
      if (!challenge) throw authnErrors.badRequest('Unknown, used or expired passkey challenge: ask for new registration options')
      let created: Awaited<ReturnType<typeof verifyCreation>>
      try {
        created = await verifyCreation(response, challenge, config)
      } catch (error) {
        throw authnErrors.badRequest(`The passkey could not be verified: ${(error as Error).message}`)
      }
      const row: PasskeyRow = {
        id: created.id,
        eperson_uuid: eperson.uuid,
        name: label,
        public_key: created.publicKey,
        counter: created.counter,
        transports: JSON.stringify(created.transports),
        device_type: created.deviceType,
        backed_up: created.backedUp ? 1 : 0,
        created_at: clock.now().toISOString(),
        last_used_at: null,
      }
      try {
        await repo.insertPasskey(db, row)
      } catch (error) {
        if (isUniqueViolation(error)) throw authnErrors.unprocessable('This passkey is already registered')
        throw error
      }
      by.record({ action: 'passkey.register', eperson: eperson.uuid, target: row.id })
      return row
    },

    async loginOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const config = relyingParty()
      const options = await requestOptions(config)
      await remember(options.challenge, 'login', null)
      return options
    },

    /** The eperson a login assertion proves, or undefined: every failure looks the same to the caller. */
    async verifyLogin(response: AuthenticationResponseJSON): Promise<string | undefined> {
      const config = relyingParty()
      const challenge = await recall(response.response.clientDataJSON, 'login', null)
      const passkey = challenge ? await repo.findPasskey(db, response.id) : undefined
      if (!challenge || !passkey) return undefined
      // The user handle (the eperson uuid given at registration) must name the passkey's owner.
      const newCounter = await verifyAssertion(response, challenge, config, credentialOf(passkey), passkey.eperson_uuid)
      if (newCounter === undefined) return undefined
      const counted = await repo.recordPasskeyUse(db, passkey.id, Number(passkey.counter), newCounter, clock.now().toISOString())
      return counted ? passkey.eperson_uuid : undefined
    },

    async list(epersonUuid: string, page: number, size: number): Promise<{ rows: PasskeyRow[]; total: number }> {
      const [rows, total] = await Promise.all([repo.listPasskeysOf(db, epersonUuid, size, page * size), repo.countPasskeysOf(db, epersonUuid)])
      return { rows, total }
    },

    /** A passkey its owner or an administrator may see; anyone else gets the same 404 as for a missing one. */
    find,

    async remove(id: string, by: Actor): Promise<PasskeyRow> {
      const row = await find(id, by)
      if (!(await repo.deletePasskey(db, row.eperson_uuid, id))) throw authnErrors.notFound(`No passkey ${id}`)
      by.record({ action: 'passkey.remove', eperson: row.eperson_uuid, target: id })
      return row
    },
  }
}

export type PasskeysService = ReturnType<typeof createPasskeysService>
