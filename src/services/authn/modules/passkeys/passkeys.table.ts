import type { Selectable } from 'kysely'

/** A WebAuthn credential: its id (base64url, as the authenticator names it) and COSE public key (base64url). */
interface PasskeysTable {
  id: string
  eperson_uuid: string
  name: string
  public_key: string
  /** The signature counter last seen (0 for authenticators that keep none). */
  counter: number
  /** JSON array of transports (usb, internal, hybrid…), handed back to browsers as hints. */
  transports: string
  /** `singleDevice` or `multiDevice` (synced). */
  device_type: string
  backed_up: number
  created_at: string
  last_used_at: string | null
}

/**
 * The challenge of one registration or login ceremony, kept under its SHA-256 until used once or
 * expired: in the database, so options from one instance verify on another.
 */
interface WebauthnChallengesTable {
  challenge_hash: string
  purpose: string
  /** Whose registration this is; null for a login, where the passkey names the user. */
  eperson_uuid: string | null
  expires_at: string
}

export type PasskeyRow = Selectable<PasskeysTable>
export type ChallengeRow = Selectable<WebauthnChallengesTable>

/** The tables this module owns. */
export interface PasskeysTables {
  authn_passkeys: PasskeysTable
  authn_webauthn_challenges: WebauthnChallengesTable
}
