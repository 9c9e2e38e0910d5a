import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { coreError } from '../../../../core/errors/codes.ts'
import { isLoopbackHost } from '../../../../core/http/loopback.ts'
import { DASHBOARD_COOKIE } from '../../http/auth.ts'
import { forbidden } from '../../http/errors.ts'

// Where the dashboard's requests may come from, where the dashboard is, and its cookie's flags.

/**
 * A sign-in must come from the dashboard's own page (or from a client that is no browser):
 * another site could otherwise sign a visitor's browser in as the attacker's app.
 */
function fromOwnSite(request: FastifyRequest, publicUrl: string | undefined): boolean {
  const site = request.headers['sec-fetch-site']
  if (site === 'cross-site' || site === 'same-site') return false
  const origin = request.headers.origin
  if (origin === undefined) return true
  try {
    const host = new URL(origin).host
    return host === request.host || (publicUrl !== undefined && host === new URL(publicUrl).host)
  } catch {
    return false
  }
}

/** The config of a route refused unless the request comes from this site (`refuseOtherSites`). */
export const OWN_SITE_ONLY = { ownSiteOnly: true } as const

/** The config of a route that starts a session (or a sign-in): public, and from this site only. */
export const SIGN_IN_ROUTE = { public: true, ...OWN_SITE_ONLY } as const

const OTHER_SITE_REFUSAL = 'Use the dashboard page of this site: requests from other sites are refused'

/**
 * An `onRequest` hook for the dashboard's routes: a route whose config says `ownSiteOnly`
 * answers 403 `forbidden` to a request from another site, before its body is even read.
 */
export function refuseOtherSites(publicUrl: string | undefined) {
  return function refuseRequestsFromOtherSites(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    const ownSiteOnly = (request.routeOptions.config as { ownSiteOnly?: boolean } | undefined)?.ownSiteOnly === true
    done(ownSiteOnly && !fromOwnSite(request, publicUrl) ? forbidden(OTHER_SITE_REFUSAL) : undefined)
  }
}

/**
 * Where the dashboard is, for e-mailed sign-in links and as the passkeys' relying party:
 * PAYMENTS_PUBLIC_URL, else this request's own origin only when its host is a loopback one (a
 * developer's machine). Any other Host header could be an attacker's, asking for a victim's
 * link that would lead to the attacker's site.
 */
export function dashboardBaseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl
  if (isLoopbackHost(request.hostname)) return `${request.protocol}://${request.host}`
  throw coreError('service_unavailable', 'Merchant users sign in only where PAYMENTS_PUBLIC_URL, the address of this dashboard, is set')
}

/** The session cookie: HttpOnly, SameSite=Strict, Secure over https (or an https public URL). */
export function sessionCookieOptions(request: FastifyRequest, publicUrl: string | undefined) {
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure: request.protocol === 'https' || publicUrl?.startsWith('https:') === true }
}

/** Answers a session just started (by a key, a link or a passkey): 201 `{session}`, its cookie set, nothing cached. */
export function replyWithSession<S extends { expires: string }>(request: FastifyRequest, reply: FastifyReply, publicUrl: string | undefined, started: { token: string; session: S }) {
  reply.setCookie(DASHBOARD_COOKIE, started.token, { ...sessionCookieOptions(request, publicUrl), expires: new Date(started.session.expires) })
  return reply.code(201).header('cache-control', 'no-store').send({ session: started.session })
}
