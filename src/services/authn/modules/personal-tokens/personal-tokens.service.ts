import { LRUCache } from 'lru-cache'
import type { Clock } from '../../../../core/clock.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { generateSecretToken, hashSecretToken } from '../../../../core/security/secret-token.ts'
import type { ModuleDatabase } from '../../db.ts'
import { authnErrors } from '../../errors.ts'
import type { Actor } from '../audit/index.ts'
import * as repo from './personal-tokens.repository.ts'
import type { PersonalTokenRow, PersonalTokensTables } from './personal-tokens.table.ts'

/** Every personal access token starts with this, so scanners and people recognise one (and the server tells it from a JWT). */
const PERSONAL_TOKEN_PREFIX = 'triad_pat_'
export const TOKEN_SCOPES = ['read', 'full'] as const
export type TokenScope = (typeof TOKEN_SCOPES)[number]
/** What `authenticationMethod` says for a request made with a personal access token. */
const PERSONAL_TOKEN_METHOD = 'token'

const MAX_LIFETIME_MS = 366 * 24 * 3_600_000
const MAX_NAME_LENGTH = 100
/** Revoked and expired tokens stay listed (and answer "revoked"/"expired") this long. */
const KEEP_DEAD_MS = 30 * 24 * 3_600_000
/** Last-used is written at most this often per token and instance, as a session's last-seen. */
const LAST_USED_INTERVAL_MS = 60_000
const CACHE_MAX_ENTRIES = 10_000

interface LoadedPersonalToken extends repo.TokenWithEperson {
  lastUsedMs: number
}

/** The outcome of presenting a personal access token: the token, or why it is refused (a 401). */
export type PersonalTokenCheck = { ok: true; token: LoadedPersonalToken } | { ok: false; message: string }

export function isPersonalToken(bearer: string): boolean {
  return bearer.startsWith(PERSONAL_TOKEN_PREFIX)
}

/**
 * Personal access tokens for scripts and integrations. A token is looked up by its SHA-256; an
 * instance reuses a lookup for at most AUTHN_REVOCATION_CACHE, so revocation reaches other
 * instances within the same bound as a logout, and this instance at once.
 */
export function createPersonalTokensService(deps: {
  database: ModuleDatabase<PersonalTokensTables>
  clock: Clock
  ids: IdGenerator
  revocationCacheMs: number
}) {
  const { database, clock, ids } = deps
  const cache = new LRUCache<string, { token: LoadedPersonalToken | undefined; fetchedAt: number }>({ max: CACHE_MAX_ENTRIES })
  const used = new LRUCache<string, number>({ max: CACHE_MAX_ENTRIES })

  function check(token: LoadedPersonalToken | undefined, nowMs: number): PersonalTokenCheck {
    if (!token) return { ok: false, message: 'Invalid personal access token' }
    if (token.revoked_at !== null) return { ok: false, message: `This personal access token was revoked at ${token.revoked_at}` }
    if (nowMs >= Date.parse(token.expires_at)) return { ok: false, message: `This personal access token expired at ${token.expires_at}` }
    if (token.can_log_in !== 1) return { ok: false, message: 'The account of this personal access token cannot log in' }
    return { ok: true, token }
  }

  function evict(id: string): void {
    for (const [hash, entry] of [...cache.entries()]) if (entry.token?.id === id) cache.delete(hash)
  }

  async function find(id: string, by: Pick<Actor, 'uuid' | 'admin'>): Promise<PersonalTokenRow> {
    const row = await repo.findToken(database.db, id)
    if (!row || (row.eperson_uuid !== by.uuid && !by.admin)) throw authnErrors.notFound(`No personal access token ${id}`)
    return row
  }

  return {
    /** Tells a personal access token from a JWT by its prefix (no lookup). */
    isPersonalToken,
    /** What `authenticationMethod` says for a request made with one. */
    method: PERSONAL_TOKEN_METHOD,

    /** Creates a token; the secret is in the result only, never stored and never shown again. */
    async create(input: { epersonUuid: string; name: string; expiresAt: string; scope: TokenScope }, by: Actor): Promise<{ row: PersonalTokenRow; token: string }> {
      const now = clock.now()
      const name = input.name.trim()
      if (!name || name.length > MAX_NAME_LENGTH) throw authnErrors.unprocessable(`The name must be 1 to ${MAX_NAME_LENGTH} characters long`)
      const expiresMs = Date.parse(input.expiresAt)
      if (!Number.isFinite(expiresMs) || expiresMs <= now.getTime() || expiresMs > now.getTime() + MAX_LIFETIME_MS) {
        throw authnErrors.unprocessable('expiresAt must be a date-time in the future, at most 366 days from now')
      }
      await repo.deleteDeadTokensOf(database.db, input.epersonUuid, new Date(now.getTime() - KEEP_DEAD_MS).toISOString())
      const token = generateSecretToken(32, PERSONAL_TOKEN_PREFIX.slice(0, -1))
      const row: PersonalTokenRow = {
        id: ids.prefixed('pat'),
        eperson_uuid: input.epersonUuid,
        name,
        token_hint: `${PERSONAL_TOKEN_PREFIX}…${token.slice(-4)}`,
        scope: input.scope,
        created_at: now.toISOString(),
        expires_at: new Date(expiresMs).toISOString(),
        last_used_at: null,
        revoked_at: null,
      }
      await repo.insertToken(database.db, { ...row, token_hash: hashSecretToken(token) })
      by.record({ action: 'token.create', eperson: row.eperson_uuid, target: row.id })
      return { row, token }
    },

    async list(epersonUuid: string, page: number, size: number): Promise<{ rows: PersonalTokenRow[]; total: number }> {
      const [rows, total] = await Promise.all([repo.listTokensOf(database.db, epersonUuid, size, page * size), repo.countTokensOf(database.db, epersonUuid)])
      return { rows, total }
    },

    /** A token its owner or an administrator may see; anyone else gets the same 404 as for a missing one. */
    find,

    /** Revokes a token (again: no change); it is refused at once here, within AUTHN_REVOCATION_CACHE elsewhere. */
    async revoke(id: string, by: Actor): Promise<PersonalTokenRow> {
      const row = await find(id, by)
      const revoked = await repo.revokeToken(database.db, row.eperson_uuid, id, clock.now().toISOString())
      evict(id)
      if (revoked) by.record({ action: 'token.revoke', eperson: row.eperson_uuid, target: id })
      return (await repo.findTokenOf(database.db, row.eperson_uuid, id)) ?? row
    },

    /** The answer from this instance's cache alone, without a promise; `'unknown'` when it cannot tell. */
    cached(bearer: string): PersonalTokenCheck | 'unknown' {
      const nowMs = clock.now().getTime()
      const entry = cache.get(hashSecretToken(bearer))
      if (!entry || nowMs - entry.fetchedAt >= deps.revocationCacheMs || nowMs < entry.fetchedAt) return 'unknown'
      return check(entry.token, nowMs)
    },

    async authenticate(bearer: string): Promise<PersonalTokenCheck> {
      const nowMs = clock.now().getTime()
      const hash = hashSecretToken(bearer)
      const row = await repo.findTokenByHash(database.db, hash)
      const token = row && { ...row, lastUsedMs: row.last_used_at === null ? 0 : Date.parse(row.last_used_at) }
      if (deps.revocationCacheMs > 0) cache.set(hash, { token, fetchedAt: nowMs })
      return check(token, nowMs)
    },

    /** Whether this use should be recorded as the token's last use (at most once a minute); no query. */
    usedDue(token: LoadedPersonalToken): boolean {
      return clock.now().getTime() - (used.get(token.id) ?? token.lastUsedMs) >= LAST_USED_INTERVAL_MS
    },

    async markUsed(token: LoadedPersonalToken): Promise<void> {
      const now = clock.now()
      used.set(token.id, now.getTime())
      await repo.touchToken(database.db, token.id, now.toISOString(), new Date(now.getTime() - LAST_USED_INTERVAL_MS).toISOString())
    },
  }
}

export type PersonalTokensService = ReturnType<typeof createPersonalTokensService>
