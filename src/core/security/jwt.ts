import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose'

/**
 * HS256 JSON Web Tokens. The algorithm is pinned on both sides: tokens are only ever signed
 * with HS256, and verification refuses every other `alg` (including `none`), so a token
 * cannot choose how it is checked.
 */
const JWT_ALGORITHM = 'HS256'

export interface SignOptions {
  /** `typ` header; omitted when undefined (DSpace's login tokens carry no `typ`). */
  type?: string
  /** `kid` header: which key signed, so verifiers pick it among several (key rotation). */
  keyId?: string
}

export interface VerifyOptions {
  /** The `typ` header the token must carry; undefined means it must carry none. */
  type?: string
  /** The instant to check `exp` (and `nbf`) against, from the injected clock. */
  now: Date
}

export async function signJwt(claims: JWTPayload, key: Uint8Array, options: SignOptions = {}): Promise<string> {
  const header: { alg: string; typ?: string; kid?: string } = { alg: JWT_ALGORITHM }
  if (options.type !== undefined) header.typ = options.type
  if (options.keyId !== undefined) header.kid = options.keyId
  return new SignJWT(claims).setProtectedHeader(header).sign(key)
}

/** The `kid` header of a token, without verifying anything; undefined when absent or unreadable. */
export function jwtKeyId(token: string): string | undefined {
  try {
    const { kid } = decodeProtectedHeader(token)
    return typeof kid === 'string' ? kid : undefined
  } catch {
    return undefined
  }
}

/**
 * Verifies signature, algorithm, type and expiry. Returns the payload, or undefined for any
 * token that is malformed, forged, of another type or expired: callers treat all of these
 * alike (anonymous), so they need no reason, and no exception escapes for bad input.
 */
export async function verifyJwt(token: string, key: Uint8Array, options: VerifyOptions): Promise<JWTPayload | undefined> {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, key, {
      algorithms: [JWT_ALGORITHM],
      currentDate: options.now,
      requiredClaims: ['exp'],
    })
    if (protectedHeader.typ !== options.type) return undefined
    return payload
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof TypeError || error instanceof SyntaxError) return undefined
    throw error
  }
}
