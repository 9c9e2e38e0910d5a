import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Challenge } from '../../challenge.ts'
import type { Cidr } from '../../config.ts'
import { authnErrors } from '../../errors.ts'
import { errorResponses, noBody } from '../../hal.ts'
import type { RedirectGuard } from '../../redirects.ts'
import { HANDOFF_COOKIE, handoffCookiePath } from '../login/index.ts'
import { fromTrustedProxy } from '../special-groups/index.ts'
import type { ShibbolethService } from './shibboleth.service.ts'

const HANDOFF_COOKIE_MAX_AGE_S = 60

export interface ShibbolethRoutesOptions {
  shibboleth: ShibbolethService
  challenge: Challenge
  trustedProxies: readonly Cidr[]
  isAllowedRedirect: RedirectGuard
  defaultRedirect?: string
}

/** GET /authn/shibboleth: where the Shibboleth SP sends the browser back, its headers set (DSpace's ShibbolethLoginFilter). */
export const shibbolethRoutes: FastifyPluginAsyncTypebox<ShibbolethRoutesOptions> = async (scope, deps) => {
  scope.get(
    '/authn/shibboleth',
    {
      schema: {
        tags: ['authn'],
        summary: 'Shibboleth headers mode: the Shibboleth SP in front (a trusted proxy) passes the person as headers; redirects with the hand-off cookie',
        querystring: Type.Object({ redirectUrl: Type.Optional(Type.String()) }, { additionalProperties: true }),
        response: { 302: noBody(), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      // From anyone but the SP in front, the headers are the client's own words: ignored.
      if (!fromTrustedProxy(request, deps.trustedProxies)) throw authnErrors.authenticationFailed(deps.challenge(request))
      const redirectUrl = request.query.redirectUrl ?? deps.defaultRedirect ?? '/'
      if (!deps.isAllowedRedirect(request, redirectUrl)) throw authnErrors.badRequest('Invalid redirectURL! Must match server or ui hostname.')
      const code = await deps.shibboleth.login(request.headers)
      const secure = request.protocol === 'https'
      reply.setCookie(HANDOFF_COOKIE, code, { path: handoffCookiePath(request), httpOnly: true, secure, sameSite: secure ? 'none' : 'lax', maxAge: HANDOFF_COOKIE_MAX_AGE_S })
      return reply.status(302).header('location', redirectUrl).send()
    },
  )
}
