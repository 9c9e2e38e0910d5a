import { LRUCache } from 'lru-cache'
import type { JWTPayload } from 'jose'
import type { Clock } from '../../../../core/clock.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { jwtKeyId, signJwt, verifyJwt } from '../../../../core/security/jwt.ts'
import type { Key, KeySet, Keyring } from '../../../../core/security/keyring.ts'
import { deriveKey } from '../../../../core/security/secret-token.ts'
import type { Executor, ModuleDatabase } from '../../db.ts'
import type { SessionsTables } from './sessions.table.ts'
import {
  deleteExpiredSessionsOf,
  deleteSession,
  deleteSessionsOf,
  findSessionForUpdate,
  findSessionWithEperson,
  insertSession,
  rotateSession,
  type SessionWithEperson,
  touchSession,
} from './sessions.repository.ts'
import { summariseUserAgent } from './device.ts'

type DbExecutor = Executor<SessionsTables>
type AuthnDatabase = ModuleDatabase<SessionsTables>

/** The `typ` header of short-lived tokens; login tokens carry none, as in DSpace. */
const SHORT_LIVED_TOKEN_TYPE = 'dspace-shortlived+jwt'

export interface TokenKeys {
  login: Uint8Array
  shortLived: Uint8Array
}

/** One key per token kind, derived from one secret: a short-lived token's signature can never verify as a login token's. */
function tokenKeysOf(secret: string): TokenKeys {
  return { login: deriveKey(secret, 'authn/login-token'), shortLived: deriveKey(secret, 'authn/short-lived-token') }
}

export interface TokenClaims {
  eid: string
  sg: string[]
  authenticationMethod: string
  iat: number
  exp: number
  jti: string
  sid: string
}

/** A session row with its instants parsed once, for the checks made on every request. */
export interface LoadedSession extends SessionWithEperson {
  expiresAtMs: number
  previousValidUntilMs: number
  lastSeenMs: number
}

/** Where a login comes from: recorded on its session for the list of devices. */
export interface LoginClient {
  address: string
  userAgent: string | undefined
}

export interface ValidatedToken {
  claims: TokenClaims
  session: LoadedSession
}

export interface TokenServiceOptions {
  database: AuthnDatabase
  clock: Clock
  ids: IdGenerator
  /** The signing secrets: the active one signs (its id in the `kid` header); every one verifies. */
  keyring: Pick<Keyring, 'current' | 'refresh'>
  tokenLifetimeMs: number
  refreshGraceMs: number
  sessionMaxAgeMs: number
  shortLivedLifetimeMs: number
  /** How long a session lookup is reused by this instance (0 disables the cache). */
  revocationCacheMs: number
}

const CACHE_MAX_ENTRIES = 10_000
const VERIFIED_MAX_ENTRIES = 10_000
/**
 * A session's last-seen time is written at most this often (per session, per instance, and
 * only when the stored one is older): an authenticated request costs no write in between.
 */
const LAST_SEEN_INTERVAL_MS = 60_000

function toClaims(payload: JWTPayload): TokenClaims | undefined {
  const { eid, sg, authenticationMethod, iat, exp, jti, sid } = payload as Record<string, unknown>
  if (typeof eid !== 'string' || typeof sid !== 'string' || typeof jti !== 'string') return undefined
  if (typeof authenticationMethod !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return undefined
  if (!Array.isArray(sg) || !sg.every((item) => typeof item === 'string')) return undefined
  return { eid, sg: sg as string[], authenticationMethod, iat, exp, jti, sid }
}

/** Claims in one fixed order, so re-signing the same session state yields the same token bytes. */
function orderedClaims(claims: TokenClaims): TokenClaims {
  return {
    eid: claims.eid,
    sg: claims.sg,
    authenticationMethod: claims.authenticationMethod,
    iat: claims.iat,
    exp: claims.exp,
    jti: claims.jti,
    sid: claims.sid,
  }
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/**
 * Issues, refreshes, validates and revokes tokens. Sessions live in the database so that every
 * instance agrees; each instance keeps a session lookup for at most `revocationCacheMs`, which
 * bounds how long a logout on another instance takes to reach this one. A logout on this
 * instance evicts the cache at once.
 */
export function createTokenService(options: TokenServiceOptions) {
  const { database, clock, ids, keyring } = options
  const cache = new LRUCache<string, { session: LoadedSession | undefined; fetchedAt: number }>({ max: CACHE_MAX_ENTRIES })
  // Signature checks are the costliest step of an authenticated request, and a client sends the
  // same token many times: a token's bytes verified once verify the same way again. Only good
  // signatures are remembered; expiry is still checked against the clock on every use.
  // The map is emptied whenever the set of keys changes, so a retired key's tokens stop at once.
  const verified = new LRUCache<string, TokenClaims>({ max: VERIFIED_MAX_ENTRIES })
  const derived = new Map<string, TokenKeys>()
  // When this instance last wrote each session's last-seen time.
  const seen = new LRUCache<string, number>({ max: CACHE_MAX_ENTRIES })
  let keysVersion = -1

  function derivedKeys(key: Key): TokenKeys {
    let keys = derived.get(key.id)
    if (!keys) {
      keys = tokenKeysOf(key.secret)
      derived.set(key.id, keys)
    }
    return keys
  }

  function noticed(set: KeySet): KeySet {
    if (set.version !== keysVersion) {
      keysVersion = set.version
      verified.clear()
      for (const id of derived.keys()) if (!set.find(id)) derived.delete(id)
    }
    return set
  }

  /**
   * The keys that may have signed `token`: the one its `kid` names (the file is read again when
   * no key here has that id: another instance may have rotated), or every key for tokens from
   * before rotation, which carry no `kid`.
   */
  async function candidateKeys(token: string): Promise<readonly Key[]> {
    let set = noticed(await keyring.current())
    const kid = jwtKeyId(token)
    if (kid === undefined) return set.keys
    let key = set.find(kid)
    if (!key) {
      set = noticed(await keyring.refresh())
      key = set.find(kid)
    }
    return key ? [key] : []
  }

  async function verifiedClaims(token: string, kind: keyof TokenKeys, type: string | undefined, now: Date): Promise<TokenClaims | undefined> {
    const candidates = await candidateKeys(token)
    const cacheKey = type === undefined ? token : `${type}:${token}`
    const known = verified.get(cacheKey)
    if (known) return known.exp * 1000 > now.getTime() ? known : undefined
    let payload: JWTPayload | undefined
    for (const key of candidates) {
      payload = await verifyJwt(token, derivedKeys(key)[kind], { now, type })
      if (payload) break
    }
    const claims = payload && toClaims(payload)
    if (!claims) return undefined
    verified.set(cacheKey, claims)
    return claims
  }

  async function loadSession(id: string, fresh = false): Promise<LoadedSession | undefined> {
    const nowMs = clock.now().getTime()
    const cached = cache.get(id)
    if (!fresh && cached && nowMs - cached.fetchedAt < options.revocationCacheMs && nowMs >= cached.fetchedAt) return cached.session
    const row = await findSessionWithEperson(database.db, id)
    const session = row && {
      ...row,
      expiresAtMs: Date.parse(row.expires_at),
      previousValidUntilMs: row.previous_valid_until === null ? 0 : Date.parse(row.previous_valid_until),
      lastSeenMs: Date.parse(row.last_seen_at ?? row.created_at),
    }
    if (options.revocationCacheMs > 0) {
      cache.set(id, { session, fetchedAt: nowMs })
    }
    return session
  }

  function evictEperson(epersonUuid: string): void {
    for (const [id, entry] of [...cache.entries()]) if (entry.session?.eperson_uuid === epersonUuid) cache.delete(id)
  }

  /**
   * A token newer than the cached row (refreshed on another instance a moment ago) is not one the
   * row knows: the row must be read again rather than the token refused. Only a cache can lag
   * this way, so a fresh row settles it.
   */
  function unknownToRow(session: LoadedSession | undefined, claims: TokenClaims): boolean {
    return session !== undefined && claims.jti !== session.current_jti && claims.jti !== session.previous_jti && claims.iat >= Number(session.current_iat)
  }

  function sessionAccepts(session: LoadedSession | undefined, claims: TokenClaims, now: Date, requireCurrent: boolean): session is LoadedSession {
    if (!session || session.eperson_uuid !== claims.eid || session.can_log_in !== 1) return false
    const nowMs = now.getTime()
    if (nowMs >= session.expiresAtMs) return false
    if (!requireCurrent) return true
    if (claims.jti === session.current_jti) return true
    return claims.jti === session.previous_jti && nowMs < session.previousValidUntilMs
  }

  async function signLogin(claims: TokenClaims): Promise<string> {
    const { active } = noticed(await keyring.current())
    return signJwt({ ...orderedClaims(claims) }, derivedKeys(active).login, { keyId: active.id })
  }

  return {
    /** Starts a session for a successful login and returns its first token. */
    async startSession(
      input: { epersonUuid: string; method: string; specialGroups: string[]; client?: LoginClient },
      db: DbExecutor = database.db,
    ): Promise<string> {
      const now = clock.now()
      const expiresAt = new Date(now.getTime() + options.sessionMaxAgeMs)
      const claims: TokenClaims = {
        eid: input.epersonUuid,
        sg: input.specialGroups,
        authenticationMethod: input.method,
        iat: seconds(now),
        exp: Math.min(seconds(now) + Math.floor(options.tokenLifetimeMs / 1000), seconds(expiresAt)),
        jti: ids.uuid(),
        sid: ids.uuid(),
      }
      // Each login sweeps the same eperson's dead sessions, so the table stays bounded by live ones.
      await deleteExpiredSessionsOf(db, claims.eid, now.toISOString())
      await insertSession(db, {
        id: claims.sid,
        eperson_uuid: claims.eid,
        method: claims.authenticationMethod,
        special_groups: JSON.stringify(claims.sg),
        created_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
        current_jti: claims.jti,
        current_iat: claims.iat,
        current_exp: claims.exp,
        previous_jti: null,
        previous_valid_until: null,
        device: summariseUserAgent(input.client?.userAgent),
        ip: input.client?.address || null,
        last_seen_at: now.toISOString(),
      })
      return signLogin(claims)
    },

    /**
     * The answer for a login token from this instance's caches alone, without a promise: the
     * common case of a client repeating its token within the cache bound. `'unknown'` means the
     * caches cannot tell and validateLoginToken must run.
     */
    cachedLoginToken(token: string): ValidatedToken | undefined | 'unknown' {
      const claims = verified.get(token)
      if (!claims) return 'unknown'
      const now = clock.now()
      if (claims.exp * 1000 <= now.getTime()) return undefined
      const entry = cache.get(claims.sid)
      const nowMs = now.getTime()
      if (!entry || nowMs - entry.fetchedAt >= options.revocationCacheMs || nowMs < entry.fetchedAt) return 'unknown'
      if (unknownToRow(entry.session, claims)) return 'unknown'
      return sessionAccepts(entry.session, claims, now, true) ? { claims, session: entry.session } : undefined
    },

    /** A login token that is signed, unexpired and still backed by its session; undefined otherwise. */
    async validateLoginToken(token: string): Promise<ValidatedToken | undefined> {
      const now = clock.now()
      const claims = await verifiedClaims(token, 'login', undefined, now)
      if (!claims) return undefined
      let session = await loadSession(claims.sid)
      if (unknownToRow(session, claims)) session = await loadSession(claims.sid, true)
      return sessionAccepts(session, claims, now, true) ? { claims, session } : undefined
    },

    /** A short-lived token: its own key and `typ`, so a login token never passes here (nor the reverse). */
    async validateShortLivedToken(token: string): Promise<ValidatedToken | undefined> {
      const now = clock.now()
      const claims = await verifiedClaims(token, 'shortLived', SHORT_LIVED_TOKEN_TYPE, now)
      if (!claims) return undefined
      const session = await loadSession(claims.sid)
      return sessionAccepts(session, claims, now, false) ? { claims, session } : undefined
    },

    async issueShortLived(claims: TokenClaims): Promise<string> {
      const now = clock.now()
      // `exp` has whole-second resolution: rounding down keeps the real lifetime at most the configured one.
      const exp = Math.floor((now.getTime() + options.shortLivedLifetimeMs) / 1000)
      const shortLived = { ...orderedClaims(claims), iat: seconds(now), exp, jti: ids.uuid() }
      const { active } = noticed(await keyring.current())
      return signJwt(shortLived, derivedKeys(active).shortLived, { type: SHORT_LIVED_TOKEN_TYPE, keyId: active.id })
    },

    /**
     * Issues the next token of a session. The presented token stays valid for the refresh grace
     * only. A second refresh of the same token within the grace (two tabs racing) gets the token
     * the first one got, byte for byte, so both tabs end up holding the live token.
     */
    async refresh(claims: TokenClaims): Promise<string | undefined> {
      const next = await withTransaction(database, async (trx) => {
        const now = clock.now()
        const session = await findSessionForUpdate(database, trx, claims.sid)
        if (!session || session.eperson_uuid !== claims.eid || now.toISOString() >= session.expires_at) return undefined
        const base = { eid: session.eperson_uuid, sg: JSON.parse(session.special_groups) as string[], authenticationMethod: session.method, sid: session.id }
        if (claims.jti === session.current_jti) {
          const iat = seconds(now)
          const exp = Math.min(iat + Math.floor(options.tokenLifetimeMs / 1000), seconds(new Date(session.expires_at)))
          if (exp <= iat) return undefined
          const jti = ids.uuid()
          const previousValidUntil = new Date(now.getTime() + options.refreshGraceMs).toISOString()
          const seenAt = now.toISOString()
          if (!(await rotateSession(trx, session.id, session.current_jti, { jti, iat, exp, previousValidUntil, seenAt }))) return undefined
          return { ...base, iat, exp, jti }
        }
        if (claims.jti === session.previous_jti && session.previous_valid_until !== null && now.toISOString() < session.previous_valid_until) {
          return { ...base, iat: Number(session.current_iat), exp: Number(session.current_exp), jti: session.current_jti }
        }
        return undefined
      })
      cache.delete(claims.sid)
      return next ? signLogin(next) : undefined
    },

    /** Ends every session of an eperson (logout everywhere, password change, disabling). */
    async revokeAll(epersonUuid: string, db: DbExecutor = database.db): Promise<number> {
      const count = await deleteSessionsOf(db, epersonUuid)
      evictEperson(epersonUuid)
      return count
    },

    /**
     * Ends one session (one device): its tokens, short-lived ones included, stop at once on this
     * instance and, like a logout, within AUTHN_REVOCATION_CACHE on every other one.
     */
    async revokeSession(epersonUuid: string, id: string): Promise<boolean> {
      const deleted = await deleteSession(database.db, epersonUuid, id)
      cache.delete(id)
      seen.delete(id)
      return deleted
    },

    /** Whether a request with this session should record it as seen (see LAST_SEEN_INTERVAL_MS); no query. */
    seenDue(session: LoadedSession): boolean {
      const nowMs = clock.now().getTime()
      const written = seen.get(session.id) ?? session.lastSeenMs
      return nowMs - written >= LAST_SEEN_INTERVAL_MS
    },

    /** Records that the session was used now; conditional, so instances racing write it once. */
    async markSeen(session: LoadedSession): Promise<void> {
      const now = clock.now()
      seen.set(session.id, now.getTime())
      await touchSession(database.db, session.id, now.toISOString(), new Date(now.getTime() - LAST_SEEN_INTERVAL_MS).toISOString())
    },

    /** Forgets what this instance knows of an eperson's sessions (after a change made in a transaction). */
    evictEperson,
  }
}

export type TokenService = ReturnType<typeof createTokenService>
