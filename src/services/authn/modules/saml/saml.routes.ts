import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { authnErrors } from '../../errors.ts'
import { errorResponses, noBody } from '../../hal.ts'
import type { RedirectGuard } from '../../redirects.ts'
import { HANDOFF_COOKIE } from '../login/index.ts'
import { authnRequestForm } from './authn-request-form.ts'
import type { SamlService } from './saml.service.ts'

const HANDOFF_COOKIE_MAX_AGE_S = 60
// The assertion consumer lives outside the API root, so the hand-off cookie is set for both
// places POST /authn/login may be served from.
const HANDOFF_COOKIE_PATHS = ['/server/api/authn', '/api/authn']

const ProviderParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) })

export interface SamlRoutesOptions {
  saml: SamlService
  isAllowedRedirect: RedirectGuard
  defaultRedirect?: string
}

/**
 * DSpace 8's SAML relying party routes, under /server/saml2: the metadata to register, the
 * start of a login, and the assertion consumer. None of them takes the CSRF pair (the provider's
 * page posts the response cross-site; its signature is what is checked).
 */
export const samlRoutes: FastifyPluginAsyncTypebox<SamlRoutesOptions> = async (scope, deps) => {
  const { saml } = deps

  scope.get(
    '/service-provider-metadata/:id',
    {
      schema: {
        tags: ['authn'],
        summary: "Triad's SAML service-provider metadata for one identity provider (entity id, assertion consumer URL, certificates)",
        params: ProviderParams,
        produces: ['application/samlmetadata+xml'],
        response: { 200: Type.String({ description: 'SAML 2.0 metadata (EntityDescriptor)' }), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      return reply.type('application/samlmetadata+xml').send(saml.metadata(request.params.id))
    },
  )

  scope.get(
    '/authenticate/:id',
    {
      schema: {
        tags: ['authn'],
        summary:
          'Starts SAML sign-on: redirects to the identity provider with a signed AuthnRequest (HTTP-Redirect binding), or answers a page that posts it there (HTTP-POST binding, per provider)',
        params: ProviderParams,
        querystring: Type.Object({ redirectUrl: Type.Optional(Type.String()) }, { additionalProperties: true }),
        produces: ['text/html'],
        response: {
          200: Type.String({ description: 'HTTP-POST binding: a page whose form posts the signed AuthnRequest to the provider' }),
          302: noBody(),
          ...errorResponses(400, 401, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const redirectUrl = request.query.redirectUrl ?? deps.defaultRedirect ?? '/'
      if (!deps.isAllowedRedirect(request, redirectUrl)) throw authnErrors.badRequest('Invalid redirectURL! Must match server or ui hostname.')
      const delivery = await saml.start(request.params.id, redirectUrl)
      reply.header('cache-control', 'no-store')
      if ('redirect' in delivery) return reply.redirect(delivery.redirect, 302)
      const page = authnRequestForm(delivery.post)
      return reply.type('text/html; charset=utf-8').header('content-security-policy', page.contentSecurityPolicy).send(page.html)
    },
  )

  scope.post(
    '/assertion-consumer/:id',
    {
      schema: {
        tags: ['authn'],
        summary: "The assertion consumer (HTTP-POST binding): checks the provider's signed response, then redirects with the hand-off cookie",
        params: ProviderParams,
        body: Type.Object(
          { SAMLResponse: Type.String({ minLength: 1 }), RelayState: Type.Optional(Type.String()) },
          { description: 'application/x-www-form-urlencoded, as the provider page posts it' },
        ),
        response: { 302: noBody(), ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request, reply) => {
      const { code, redirectUrl } = await saml.finish(request.params.id, request.body.SAMLResponse)
      const secure = request.protocol === 'https'
      for (const path of HANDOFF_COOKIE_PATHS) {
        reply.setCookie(HANDOFF_COOKIE, code, { path, httpOnly: true, secure, sameSite: secure ? 'none' : 'lax', maxAge: HANDOFF_COOKIE_MAX_AGE_S })
      }
      return reply.status(302).header('location', redirectUrl).send()
    },
  )

  scope.post(
    '/single-logout/:id',
    {
      schema: {
        tags: ['authn'],
        summary:
          "Single logout (HTTP-POST binding): the provider's signed LogoutRequest ends the person's sessions (302 with the LogoutResponse); its LogoutResponse to a logout started here sends the browser to `return`",
        params: ProviderParams,
        body: Type.Object(
          { SAMLRequest: Type.Optional(Type.String({ minLength: 1 })), SAMLResponse: Type.Optional(Type.String({ minLength: 1 })), RelayState: Type.Optional(Type.String()) },
          { description: 'application/x-www-form-urlencoded, as the provider page posts it' },
        ),
        response: { 204: noBody(), 302: noBody(), ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request, reply) => {
      const { SAMLRequest: samlRequest, SAMLResponse: samlResponse, RelayState: relayState } = request.body
      if (samlResponse !== undefined) return reply.status(302).header('location', await saml.finishLogout(request.params.id, samlResponse)).send()
      if (samlRequest === undefined) throw authnErrors.badRequest('SAMLRequest or SAMLResponse is required')
      const location = await saml.logoutRequest(request.params.id, samlRequest, relayState)
      return location ? reply.status(302).header('location', location).send() : reply.status(204).send()
    },
  )
}
