import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Cidr } from '../../config.ts'
import { UUID_PATTERN } from '../../context.ts'
import type { AuthnContext } from './auth-context.ts'
import { authnErrors } from '../../errors.ts'
import type { PublicEpersonRow } from '../epersons/index.ts'
import type { EpersonsService } from '../epersons/index.ts'
import type { AuditLog } from '../audit/index.ts'
import type { PersonalTokenCheck, PersonalTokensService } from '../personal-tokens/index.ts'
import type { SessionWithEperson } from '../sessions/index.ts'
import type { TokenService, ValidatedToken } from '../sessions/index.ts'
import { type Address, clientAddress } from '../special-groups/index.ts'
import type { SpecialGroupsService } from '../special-groups/index.ts'

const SHORT_LIVED_QUERY_PARAMETER = 'authentication-token'
const BEARER = /^Bearer\s+(\S+)\s*$/i

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined
}

function shortLivedTokenParameter(request: FastifyRequest): string | undefined {
  // Runs in a hook before any route's schema applies, so the query is read as the unknown it is.
  const query: unknown = request.query
  const value = typeof query === 'object' && query !== null ? Reflect.get(query, SHORT_LIVED_QUERY_PARAMETER) : undefined
  return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined
}

type EpersonColumns = Pick<SessionWithEperson, 'eperson_uuid' | 'email' | 'can_log_in' | 'first_name' | 'last_name' | 'eperson_created_at' | 'last_active'>

/** The eperson joined onto a session or personal access token row. */
function epersonOf(session: EpersonColumns): PublicEpersonRow {
  return {
    uuid: session.eperson_uuid,
    email: session.email,
    can_log_in: session.can_log_in,
    first_name: session.first_name,
    last_name: session.last_name,
    created_at: session.eperson_created_at,
    last_active: session.last_active,
  }
}

/**
 * One request's AuthnContext. A class, not an object literal with a getter: a getter closure
 * made per request gave every context its own hidden class, and V8's scavenger then kept each
 * request alive until the next full collection (promoting ~10 KB per request; CPU per request
 * up by half under load).
 */
class RequestAuthnContext implements AuthnContext {
  eperson?: PublicEpersonRow = undefined
  realEperson?: PublicEpersonRow = undefined
  tokenKind?: AuthnContext['tokenKind'] = undefined
  claims?: AuthnContext['claims'] = undefined
  sessionSnapshot?: object = undefined
  method?: string = undefined
  specialGroups: string[]
  ipGroups: string[]
  readonly #request: FastifyRequest
  readonly #trustedProxies: readonly Cidr[]
  readonly #parsedAddress: Address | undefined
  #clientAddress: string | undefined = undefined

  /** `parsedAddress`: the client address when the caller already worked it out. */
  constructor(request: FastifyRequest, trustedProxies: readonly Cidr[], ipGroups: string[], parsedAddress: Address | undefined) {
    this.#request = request
    this.#trustedProxies = trustedProxies
    this.#parsedAddress = parsedAddress
    this.specialGroups = ipGroups
    this.ipGroups = ipGroups
  }

  /** Worked out on first read: parsing the address costs little, but most requests never need it. */
  get clientAddress(): string {
    this.#clientAddress ??= (this.#parsedAddress ?? clientAddress(this.#request, this.#trustedProxies))?.toString() ?? ''
    return this.#clientAddress
  }
}

// Paths where a non-GET request may carry the query token: logout answers 204 whatever it gets.
const LOGOUT_PATH = /\/api\/authn\/logout$/

/**
 * Works out who a request runs as, before any route: the login token from `Authorization`
 * (or, on GET/HEAD only, a short-lived token from `?authentication-token=`), the client
 * address's special groups, and X-On-Behalf-Of. A bad token is simply anonymous.
 */
export function installAuthentication(
  scope: FastifyInstance,
  deps: {
    tokens: TokenService
    personalTokens: PersonalTokensService
    epersons: EpersonsService
    specialGroups: SpecialGroupsService
    trustedProxies: readonly Cidr[]
    loginAs: boolean
    audit: AuditLog
  },
): void {
  /** Applies a login or short-lived token; true when its session's last-seen time is due to be written. */
  function applyToken(context: AuthnContext, validated: ValidatedToken | undefined, kind: 'login' | 'shortLived'): boolean {
    if (!validated) return false
    context.eperson = epersonOf(validated.session)
    context.tokenKind = kind
    context.claims = validated.claims
    context.sessionSnapshot = validated.session
    context.method = validated.claims.authenticationMethod
    context.specialGroups = context.ipGroups.length > 0 ? [...new Set([...validated.claims.sg, ...context.ipGroups])] : validated.claims.sg
    return deps.tokens.seenDue(validated.session)
  }

  /**
   * Applies a personal access token, or refuses the request: unlike a bad login token (anonymous,
   * as in DSpace), a bad personal access token is a 401 saying why, so a script fails loudly. A
   * read-only token may only read. Returns true when the token's last use is due to be written.
   */
  function applyPersonalToken(request: FastifyRequest, context: AuthnContext, check: PersonalTokenCheck): boolean {
    if (!check.ok) throw authnErrors.invalidPersonalToken(check.message)
    const { token } = check
    if (token.scope !== 'full' && request.method !== 'GET' && request.method !== 'HEAD') {
      throw authnErrors.accessDenied('This personal access token is read-only (scope read): it may only be used for GET and HEAD requests')
    }
    context.eperson = epersonOf(token)
    context.tokenKind = 'personal'
    context.sessionSnapshot = token
    context.method = deps.personalTokens.method
    return deps.personalTokens.usedDue(token)
  }

  async function authenticatePersonally(request: FastifyRequest, context: AuthnContext, bearer: string, known: PersonalTokenCheck | undefined): Promise<void> {
    const check = known ?? (await deps.personalTokens.authenticate(bearer))
    if (applyPersonalToken(request, context, check) && check.ok) await deps.personalTokens.markUsed(check.token)
    const onBehalfOf = request.headers['x-on-behalf-of']
    if (onBehalfOf !== undefined) await actOnBehalf(request, context, onBehalfOf)
  }

  async function actOnBehalf(request: FastifyRequest, context: AuthnContext, onBehalfOf: string | string[]): Promise<void> {
    // DSpace's order of checks (StatelessAuthenticationFilter), so clients see the same statuses.
    const real = context.eperson
    if (!real) throw authnErrors.authenticationRequired()
    if (context.tokenKind === 'personal') throw authnErrors.accessDenied('A personal access token cannot act on behalf of another user')
    if (!deps.loginAs) throw authnErrors.badRequest('Acting on behalf of another user is not enabled')
    if (!(await deps.epersons.isAdmin(real.uuid))) throw authnErrors.accessDenied()
    const targetId = Array.isArray(onBehalfOf) ? (onBehalfOf[0] ?? '') : onBehalfOf
    if (!UUID_PATTERN.test(targetId)) throw authnErrors.badRequest(`X-On-Behalf-Of is not a valid eperson UUID: ${JSON.stringify(targetId)}`)
    const target = await deps.epersons.findByUuid(targetId.toLowerCase())
    if (target?.can_log_in !== 1 || (await deps.epersons.isAdmin(target.uuid))) {
      throw authnErrors.badRequest('X-On-Behalf-Of must name an existing eperson who is not an administrator')
    }
    context.realEperson = real
    context.eperson = target
    context.sessionSnapshot = undefined
    // The impersonated user gets the address's groups, not the administrator's login groups.
    context.specialGroups = context.ipGroups
    deps.audit.loginAs(
      {
        administrator: real.uuid,
        administratorEmail: real.email,
        onBehalfOf: target.uuid,
        onBehalfOfEmail: target.email,
        method: request.method,
        path: request.url.split('?')[0],
      },
      request,
    )
  }

  async function authenticateSlowly(request: FastifyRequest, context: AuthnContext, bearer: string | undefined, queryToken: string | undefined): Promise<void> {
    let validated: ValidatedToken | undefined
    if (bearer) {
      validated = await deps.tokens.validateLoginToken(bearer)
      if (applyToken(context, validated, 'login') && validated) await deps.tokens.markSeen(validated.session)
    } else if (queryToken !== undefined) {
      validated = await deps.tokens.validateShortLivedToken(queryToken)
      if (applyToken(context, validated, 'shortLived') && validated) await deps.tokens.markSeen(validated.session)
    }
    const onBehalfOf = request.headers['x-on-behalf-of']
    if (onBehalfOf !== undefined) await actOnBehalf(request, context, onBehalfOf)
  }

  // A callback-style hook with a synchronous fast path: anonymous requests, and a token this
  // instance has just seen, are settled without a promise or a query.
  scope.addHook('onRequest', function authenticateRequest(request, _reply, done) {
    // Parsing the address costs little but runs on every request: do it only when something reads it.
    const address = deps.specialGroups.hasAddressRules ? clientAddress(request, deps.trustedProxies) : undefined
    const ipGroups = deps.specialGroups.hasAddressRules ? deps.specialGroups.forAddress(address) : []
    const context = new RequestAuthnContext(request, deps.trustedProxies, ipGroups, address)
    request.authnContext = context

    const bearer = bearerToken(request)
    const queryToken = shortLivedTokenParameter(request)
    const readOnly = request.method === 'GET' || request.method === 'HEAD'
    if (queryToken !== undefined && !readOnly && !LOGOUT_PATH.test(request.url.split('?')[0])) {
      // A token in a URL is a download link: it may read, never change anything.
      return done(authnErrors.accessDenied('A short-lived token cannot be used for this request'))
    }
    const usableQueryToken = bearer === undefined && readOnly ? queryToken : undefined
    const impersonating = request.headers['x-on-behalf-of'] !== undefined
    if (bearer !== undefined && deps.personalTokens.isPersonalToken(bearer)) {
      // Logout answers 204 whatever it gets (DSpace), and a personal access token is not a session it could end.
      if (LOGOUT_PATH.test(request.url.split('?')[0])) return done()
      const cached = deps.personalTokens.cached(bearer)
      const known = cached === 'unknown' ? undefined : cached
      if (known && !impersonating && (!known.ok || !deps.personalTokens.usedDue(known.token))) {
        try {
          applyPersonalToken(request, context, known)
        } catch (error) {
          return done(error as Error)
        }
        return done()
      }
      authenticatePersonally(request, context, bearer, known).then(() => done(), done)
      return
    }
    if (!impersonating) {
      if (bearer === undefined && usableQueryToken === undefined) return done()
      if (bearer !== undefined) {
        const cached = deps.tokens.cachedLoginToken(bearer)
        // A session due for its last-seen write takes the slow path, which writes it.
        if (cached !== 'unknown' && !(cached && deps.tokens.seenDue(cached.session))) {
          applyToken(context, cached, 'login')
          return done()
        }
      }
    }
    authenticateSlowly(request, context, bearer, usableQueryToken).then(() => done(), done)
  })
}
