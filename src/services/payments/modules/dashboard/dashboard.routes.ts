import { join } from 'node:path'
import cookie from '@fastify/cookie'
import fastifyStatic from '@fastify/static'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import type { PaymentsConfig } from '../../config.ts'
import { DASHBOARD_COOKIE, dashboardToken } from '../../http/auth.ts'
import { pickLocale } from '../../http/locale.ts'
import { EmptyBody, responses } from '../../http/route-kit.ts'
import { FollowLinkBody, LinkRequestBody, LinkRequestResponse, PageQuery, SessionResponse, SignInBody } from './dashboard.schemas.ts'
import type { DashboardService } from './dashboard.service.ts'
import { renderDashboardPage } from './dashboard.view.ts'
import { dashboardBaseUrl, refuseOtherSites, replyWithSession, SIGN_IN_ROUTE, sessionCookieOptions } from './dashboard-site.ts'
import type { SignInLinks } from './sign-in-links.ts'
import { dashboardPasskeyRoutes } from './passkeys.routes.ts'
import type { DashboardPasskeys } from './passkeys.service.ts'

const ASSETS_DIR = join(import.meta.dirname, 'assets')
const TAGS = ['payments', 'dashboard']
const PUBLIC = { public: true }

/** The page talks to this origin only (the merchant API); nothing inline runs, nothing frames it. */
function pageHeaders(reply: FastifyReply) {
  return reply
    .header(
      'content-security-policy',
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    )
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
}

/**
 * The merchant dashboard (issue 18): `GET /dashboard`, its script and styles under
 * `/dashboard/assets/`, and the session routes that trade an API key for an HttpOnly cookie.
 * Everything else the page shows comes from the merchant API, called with that cookie.
 */
export function dashboardRoutes(
  sessions: DashboardService,
  deps: { config: PaymentsConfig; clock: Clock; links: SignInLinks; passkeys: DashboardPasskeys },
): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    // Only these routes set or clear the session cookie (the auth hook reads it: http/auth.ts).
    await app.register(cookie)
    // Before any route, the passkeys' included, so that every SIGN_IN_ROUTE gets it.
    app.addHook('onRequest', refuseOtherSites(deps.config.publicUrl))
    await app.register(dashboardPasskeyRoutes(deps.passkeys, { config: deps.config }))

    await app.register(async (assets) => {
      assets.addHook('onRoute', (route) => {
        route.config = { ...(route.config as object | undefined), ...PUBLIC } as typeof route.config
      })
      await assets.register(fastifyStatic, { root: ASSETS_DIR, prefix: '/dashboard/assets/', decorateReply: false, index: false, maxAge: '10m', schemaHide: true })
    })

    app.get(
      '/dashboard',
      {
        config: PUBLIC,
        schema: {
          tags: TAGS,
          summary: 'The merchant dashboard (HTML): volume, transactions, disputes, webhooks',
          querystring: PageQuery,
          response: { 200: Type.String({ description: 'HTML' }) },
        },
      },
      async (request, reply) => {
        const locale = pickLocale(request.query.lang, request.headers['accept-language'])
        const today = deps.clock.now().toISOString().slice(0, 10)
        return pageHeaders(reply).type('text/html; charset=utf-8').send(renderDashboardPage({ locale, today }))
      },
    )

    app.post(
      '/dashboard/session',
      {
        config: SIGN_IN_ROUTE,
        schema: {
          tags: TAGS,
          summary: 'Sign in to the dashboard with an API key: sets the HttpOnly session cookie and answers the CSRF token',
          body: SignInBody,
          response: responses({ 201: SessionResponse }),
        },
      },
      async (request, reply) =>
        replyWithSession(request, reply, deps.config.publicUrl, await sessions.signIn(request.body.key)),
    )

    app.post(
      '/dashboard/sign-in-link',
      {
        config: SIGN_IN_ROUTE,
        schema: {
          tags: TAGS,
          summary: "A merchant user asks for a one-time sign-in link by e-mail (the same 202 whether or not the address is a user's)",
          body: LinkRequestBody,
          response: responses({ 202: LinkRequestResponse }),
        },
      },
      async (request, reply) => {
        const locale = pickLocale(request.body.lang, request.headers['accept-language'])
        await deps.links.request({ email: request.body.email, ip: request.ip, baseUrl: dashboardBaseUrl(request, deps.config.publicUrl), locale })
        return reply.code(202).header('cache-control', 'no-store').send({ linkLifetimeMinutes: Math.round(deps.config.dashboardLinks.ttlMs / 60_000) })
      },
    )

    app.post(
      '/dashboard/session/link',
      {
        config: SIGN_IN_ROUTE,
        schema: {
          tags: TAGS,
          summary: 'Sign in as a merchant user with the token of an e-mailed link (once): sets the HttpOnly session cookie and answers the CSRF token',
          body: FollowLinkBody,
          response: responses({ 201: SessionResponse }),
        },
      },
      async (request, reply) =>
        replyWithSession(request, reply, deps.config.publicUrl, await deps.links.follow(request.body.token)),
    )

    app.get(
      '/dashboard/session',
      {
        config: PUBLIC,
        schema: {
          tags: TAGS,
          summary: "The dashboard session of this browser's cookie, with its CSRF token (401 when signed out)",
          response: responses({ 200: SessionResponse }),
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store')
        return { session: await sessions.current(dashboardToken(request)) }
      },
    )

    app.delete(
      '/dashboard/session',
      {
        schema: {
          tags: TAGS,
          summary: 'Sign out of the dashboard (with the session cookie: X-CSRF-Token required)',
          response: responses({ 204: EmptyBody }),
        },
      },
      async (request, reply) => {
        await sessions.signOut(dashboardToken(request))
        reply.clearCookie(DASHBOARD_COOKIE, sessionCookieOptions(request, deps.config.publicUrl))
        return reply.code(204).send()
      },
    )
  }
}
