import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { apiBase } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { errorResponses, noBody } from '../../hal.ts'
import type { RedirectGuard } from '../../redirects.ts'
import { HANDOFF_COOKIE, handoffCookiePath } from '../login/index.ts'
import type { OidcService } from './oidc.service.ts'

const HANDOFF_COOKIE_MAX_AGE_S = 60

export interface OidcRoutesOptions {
  oidc: OidcService
  isAllowedRedirect: RedirectGuard
  defaultRedirect?: string
}

export const oidcRoutes: FastifyPluginAsyncTypebox<OidcRoutesOptions> = async (scope, deps) => {
  const { oidc } = deps
  scope.get(
    '/authn/oidc',
    {
      schema: {
        tags: ['authn'],
        summary: 'OpenID Connect sign-on: starts at the provider, and is its redirect_uri',
        querystring: Type.Object(
          {
            redirectUrl: Type.Optional(Type.String()),
            code: Type.Optional(Type.String()),
            state: Type.Optional(Type.String()),
            error: Type.Optional(Type.String()),
          },
          { additionalProperties: true },
        ),
        response: { 302: noBody(), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const query = request.query
      const callbackUrl = `${apiBase(request)}/authn/oidc`
      if (query.code !== undefined || query.error !== undefined) {
        if (query.error !== undefined) throw authnErrors.signOnFailed()
        const { code, redirectUrl } = await oidc.finish(new URL(`${request.protocol}://${request.host}${request.url}`))
        const secure = request.protocol === 'https'
        reply.setCookie(HANDOFF_COOKIE, code, {
          path: handoffCookiePath(request),
          httpOnly: true,
          secure,
          sameSite: secure ? 'none' : 'lax',
          maxAge: HANDOFF_COOKIE_MAX_AGE_S,
        })
        return reply.status(302).header('location', redirectUrl).send()
      }
      const redirectUrl = query.redirectUrl ?? deps.defaultRedirect ?? '/'
      if (!deps.isAllowedRedirect(request, redirectUrl)) throw authnErrors.badRequest('Invalid redirectURL! Must match server or ui hostname.')
      const location = await oidc.start(callbackUrl, redirectUrl)
      return reply.status(302).header('location', location.toString()).send()
    },
  )
}
