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

// Passkeys (WebAuthn, with @simplewebauthn/server) as every service here uses them: discoverable
// credentials only (the passkey names its user), user verification required, attestation not
// asked for (`none`): a passkey proves possession and the origin it was made for, which is what
// makes it phishing-resistant. The services keep the challenges and the credentials.

export const CEREMONY_TIMEOUT_MS = 5 * 60_000

/** Where passkeys are used: the host name they are bound to and the origins of its pages. */
export interface RelyingParty {
  rpId: string
  origins: string[]
}

/** A stored credential: its id and COSE public key (base64url), counter and transports. */
export interface StoredCredential {
  id: string
  publicKey: string
  counter: number
  transports: AuthenticatorTransport[]
}

/** The challenge a browser signed, read from its client data (base64url JSON); undefined if unreadable. */
export function signedChallenge(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const challenge = typeof data === 'object' && data !== null ? Reflect.get(data, 'challenge') : undefined
    return typeof challenge === 'string' ? challenge : undefined
  } catch {
    return undefined
  }
}

/** Creation options for a new passkey of `user` (its id becomes the passkey's user handle). */
export function creationOptions(
  rp: RelyingParty & { rpName: string },
  user: { id: string; name: string; displayName?: string },
  exclude: StoredCredential[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpId,
    userName: user.name,
    userID: new TextEncoder().encode(user.id),
    ...(user.displayName === undefined ? {} : { userDisplayName: user.displayName }),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: exclude.map((credential) => ({ id: credential.id, transports: credential.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  })
}

/** The new credential a browser's answer to creation options proves; throws an Error saying why not. */
export async function verifyCreation(response: RegistrationResponseJSON, challenge: string, rp: RelyingParty) {
  const verification = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origins, expectedRPID: rp.rpId, requireUserVerification: true })
  const info = verification.registrationInfo
  if (!verification.verified || !info) throw new Error('its signature or origin did not verify')
  return {
    id: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: response.response.transports ?? [],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  }
}

export function requestOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required', timeout: CEREMONY_TIMEOUT_MS })
}

/**
 * The new signature counter when a login assertion verifies against `credential` and names
 * `userId` as its user handle (when it names one), else undefined: every failure looks the same.
 */
export async function verifyAssertion(response: AuthenticationResponseJSON, challenge: string, rp: RelyingParty, credential: StoredCredential, userId: string): Promise<number | undefined> {
  const userHandle = response.response.userHandle
  if (userHandle !== undefined && Buffer.from(userHandle, 'base64url').toString('utf8') !== userId) return undefined
  try {
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpId,
      credential: { id: credential.id, publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')), counter: credential.counter, transports: credential.transports },
      requireUserVerification: true,
    })
    return verification.verified ? verification.authenticationInfo.newCounter : undefined
  } catch {
    return undefined
  }
}
