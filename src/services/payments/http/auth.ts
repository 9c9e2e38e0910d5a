import { parseCookie } from 'cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { coreError } from '../../../core/errors/codes.ts'
import type { Actor } from '../actor.ts'

/** The calling app, as the routes see it (the apps module's AppRow satisfies it). */
export interface CallingApp {
  id: string
  name: string | null
  created: string
}

/** What the hook needs of the apps module: a key's app. Declared here, so http/ imports no module. */
export interface KeyAuthenticator {
  authenticate(key: string): Promise<CallingApp | undefined>
}

const authenticated = new WeakMap<FastifyRequest, CallingApp>()
const actors = new WeakMap<FastifyRequest, Actor>()

/**
 * HTTP Basic with an empty user name and the API key as the password (Paylike's scheme). A
 * client that puts the key in the user name instead is accepted too: the key is the secret
 * either way.
 */
export function keyFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header)
  if (!match) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  const user = decoded.slice(0, colon)
  const password = decoded.slice(colon + 1)
  const key = password || user
  return key.length > 0 && key.length <= 200 ? key : undefined
}

/** The cookie of a dashboard sign-in (HttpOnly, SameSite=Strict): it holds the session token. */
export const DASHBOARD_COOKIE = 'triad_dashboard'
/** The header a dashboard page sends its CSRF token in, on every state-changing call. */
const CSRF_HEADER = 'x-csrf-token'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * The dashboard session token of the request's cookies. Parsed here, on the requests that may
 * carry it, rather than by a cookie plugin on every request of the scope.
 */
export function dashboardToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie
  return header === undefined ? undefined : parseCookie(header)[DASHBOARD_COOKIE]
}

/**
 * Who a dashboard cookie signs in as: `member` is the id the routes check memberships with
 * (an app's, or a merchant user's: users are members of their merchants with full access);
 * `actor` is who the trail and the events name.
 */
export interface SessionPrincipal {
  member: CallingApp
  actor: Actor
}

/** What the hook needs of the dashboard's sessions (modules/dashboard): who a cookie signs in as. */
export interface SessionAuthenticator {
  authenticate(token: string): Promise<SessionPrincipal | undefined>
  /** Whether `header` is the CSRF token of the session `token` (compared in constant time). */
  csrfMatches(token: string, header: string): boolean
}

const BASIC_CHALLENGE = { headers: { 'www-authenticate': 'Basic realm="payments"' } }

/**
 * An `onRequest` hook: every route that is not marked public needs a known key (else 401), or
 * a dashboard session cookie. A call that changes state with the cookie must also carry the
 * session's CSRF token in X-CSRF-Token (else 403): the cookie is sent by the browser on its own,
 * the header only by the dashboard's script. An Authorization header wins over the cookie.
 */
export function authHook(apps: KeyAuthenticator, sessions?: SessionAuthenticator) {
  const authenticate = async (request: FastifyRequest) => {
    const key = keyFromAuthorization(request.headers.authorization)
    const token = request.headers.authorization === undefined && sessions ? dashboardToken(request) : undefined
    if (key === undefined && token) {
      // No Basic challenge here: it would make the browser pop up its own password dialog.
      const principal = await sessions?.authenticate(token)
      if (!principal) throw coreError('unauthorized', 'The dashboard session has ended; sign in again')
      if (!SAFE_METHODS.has(request.method)) {
        const header = request.headers[CSRF_HEADER]
        if (typeof header !== 'string' || !sessions?.csrfMatches(token, header))
          throw coreError('forbidden', 'A dashboard session changes state only with its CSRF token in X-CSRF-Token')
      }
      if (principal.actor.type === 'user' && (request.routeOptions.config as { appOnly?: boolean } | undefined)?.appOnly)
        throw coreError('forbidden', "Only an app's key can do this; a merchant user cannot")
      authenticated.set(request, principal.member)
      actors.set(request, principal.actor)
      return
    }
    if (key === undefined) throw coreError('unauthorized', 'Authenticate with HTTP Basic: an empty user name and the API key as the password', BASIC_CHALLENGE)
    const app = await apps.authenticate(key)
    if (!app) throw coreError('unauthorized', 'Unknown API key', BASIC_CHALLENGE)
    authenticated.set(request, app)
  }
  // Callback style: a public route (the client API, the hosted page) passes without a promise.
  return function authenticateUnlessPublic(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) {
    if ((request.routeOptions.config as { public?: boolean } | undefined)?.public) return done()
    authenticate(request).then(() => done(), done)
  }
}

/**
 * Who made this (authenticated) request, for the audit: the app of its key or dashboard
 * session, or the merchant user signed in to the dashboard.
 */
export function currentActor(request: FastifyRequest): Actor {
  const actor = actors.get(request)
  return actor ?? { type: 'app', id: currentApp(request).id }
}

/**
 * The member that made this (authenticated) request: the app of its key or dashboard session,
 * or, for a merchant user signed in to the dashboard, that user (routes marked `appOnly`
 * refuse users); the services check memberships of either by its id.
 */
export function currentApp(request: FastifyRequest): CallingApp {
  const app = authenticated.get(request)
  if (!app) throw coreError('unauthorized', 'Not authenticated')
  return app
}
