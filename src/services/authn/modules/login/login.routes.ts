import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { apiBase, apiPrefix } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { errorResponses, LinkSchema, noBody } from '../../hal.ts'
import { bearerToken } from '../auth-context/index.ts'
import { rotateCsrf } from '../csrf/index.ts'
import type { LoginClient, TokenService } from '../sessions/index.ts'
import type { Challenge } from '../../challenge.ts'
import type { LoginService } from './login.service.ts'

/** The HttpOnly cookie that carries a federated login's one-time code to POST /authn/login. */
export const HANDOFF_COOKIE = 'Authorization-cookie'

export function handoffCookiePath(request: FastifyRequest): string {
  return `${apiPrefix(request)}/authn`
}

const LoginBody = Type.Object(
  { user: Type.Optional(Type.String()), password: Type.Optional(Type.String()) },
  { description: 'application/x-www-form-urlencoded; empty for a refresh or a federated hand-off' },
)

const ShortLivedTokenResponse = Type.Object({
  token: Type.String(),
  type: Type.Literal('shortlivedtoken'),
  _links: Type.Object({ self: LinkSchema }),
})

const OTHER_METHODS = ['GET', 'PUT', 'PATCH', 'DELETE'] as const

/** Where a login request comes from, for its session's entry in the list of devices. */
export function loginClient(request: FastifyRequest): LoginClient {
  const userAgent = request.headers['user-agent']
  return { address: request.authnContext.clientAddress, userAgent: typeof userAgent === 'string' ? userAgent : undefined }
}

/** A successful login's answer, as DSpace gives it: 200, the token in `Authorization`, a fresh CSRF token. */
export function sendToken(request: FastifyRequest, reply: FastifyReply, token: string) {
  rotateCsrf(request)
  return reply.status(200).header('authorization', `Bearer ${token}`).send()
}

export interface LoginRoutesOptions {
  login: LoginService
  tokens: TokenService
  challenge: Challenge
  logoutUrl?: string
  isAllowedRedirect(request: FastifyRequest, url: string): boolean
  /**
   * Front-channel single logout of a federated login (SAML): where to send the browser so the
   * provider ends its session too, then back to `returnUrl`; undefined when there is none.
   */
  federatedLogout?(epersonUuid: string, method: string, returnUrl: string): Promise<string | undefined>
}

export const loginRoutes: FastifyPluginAsyncTypebox<LoginRoutesOptions> = async (scope, deps) => {
  const { login, tokens, challenge } = deps

  scope.route({
    method: 'POST',
    url: '/authn/login',
    schema: {
      tags: ['authn'],
      summary: 'Log in with a password, refresh a token, or finish a federated login',
      body: LoginBody,
      consumes: ['application/x-www-form-urlencoded'],
      response: { 200: noBody({ description: 'The token is in the Authorization response header' }), ...errorResponses(400, 401, 403, 415, 429) },
    },
    // A refresh has no body at all; validate it as an empty form.
    preValidation: async (request) => {
      request.body ??= {}
    },
    handler: async (request, reply) => {
      // No querystring schema: credentials in the URL are refused here, with DSpace's message.
      const query: unknown = request.query
      if (typeof query === 'object' && query !== null && ('user' in query || 'password' in query)) {
        // Credentials in a URL end up in logs and browser history: refuse them outright.
        throw authnErrors.badRequest('Credentials must be sent in an application/x-www-form-urlencoded body, never in the URL')
      }
      const body = request.body
      const isForm = (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
      const hasCredentials = body?.user !== undefined || body?.password !== undefined
      if (hasCredentials && !isForm) {
        throw authnErrors.formBodyRequired()
      }
      const wwwAuthenticate = challenge(request)
      if (hasCredentials) {
        const token = await login.passwordLogin({
          user: body?.user ?? '',
          password: body?.password ?? '',
          client: loginClient(request),
          challenge: wwwAuthenticate,
        })
        return sendToken(request, reply, token)
      }
      if (bearerToken(request) !== undefined) return sendToken(request, reply, await login.refresh(request.authnContext, wwwAuthenticate))
      const handoff = request.cookies[HANDOFF_COOKIE]
      if (handoff) {
        const token = await login.exchangeHandoff(handoff, loginClient(request), wwwAuthenticate)
        reply.clearCookie(HANDOFF_COOKIE, { path: handoffCookiePath(request) })
        return sendToken(request, reply, token)
      }
      throw authnErrors.authenticationFailed(wwwAuthenticate)
    },
  })

  scope.route({
    method: [...OTHER_METHODS],
    url: '/authn/login',
    exposeHeadRoute: false,
    schema: { tags: ['authn'], summary: 'Not allowed: log in with POST', response: errorResponses(405) },
    handler: async () => {
      throw authnErrors.methodNotAllowed('Only POST is allowed for login requests.', 'POST')
    },
  })

  scope.route({
    method: 'POST',
    url: '/authn/logout',
    schema: {
      tags: ['authn'],
      summary: 'Log out everywhere: every token of the user, on every device, stops working',
      querystring: Type.Object({ action: Type.Optional(Type.String()), return: Type.Optional(Type.String()) }),
      response: { 204: noBody(), 302: noBody(), ...errorResponses(400, 403) },
    },
    handler: async (request, reply) => {
      const { action, return: returnUrl } = request.query
      const context = request.authnContext
      const federated = context.tokenKind === 'login' && !context.realEperson ? context.claims : undefined
      await login.logout(bearerToken(request))
      rotateCsrf(request)
      // `action` asks for the federated scheme's front-channel logout (DSpace's parameters).
      if (action !== undefined && federated && deps.federatedLogout) {
        const back = returnUrl ?? '/'
        if (!deps.isAllowedRedirect(request, back)) throw authnErrors.badRequest('Invalid return URL! Must match the server or an allowed origin.')
        const location = await deps.federatedLogout(federated.eid, federated.authenticationMethod, back)
        if (location) return reply.status(302).header('location', location).send()
      }
      if (!deps.logoutUrl) return reply.status(204).send()
      const target = new URL(deps.logoutUrl)
      if (returnUrl !== undefined) {
        // Same allow-list as federated redirects, so logout is no open redirect.
        if (!deps.isAllowedRedirect(request, returnUrl)) throw authnErrors.badRequest('Invalid return URL! Must match the server or an allowed origin.')
        target.searchParams.set('return', returnUrl)
      }
      if (action !== undefined) target.searchParams.set('action', action)
      return reply.status(302).header('location', target.toString()).send()
    },
  })

  scope.route({
    method: 'HEAD',
    url: '/authn/logout',
    schema: { tags: ['authn'], summary: 'Answers 204 without logging out', response: { 204: noBody() } },
    handler: async (_request, reply) => reply.status(204).send(),
  })

  scope.route({
    method: [...OTHER_METHODS],
    url: '/authn/logout',
    exposeHeadRoute: false,
    schema: { tags: ['authn'], summary: 'Not allowed: log out with POST', response: errorResponses(405) },
    handler: async () => {
      throw authnErrors.methodNotAllowed('Only POST is allowed for logout requests.', 'POST, HEAD')
    },
  })

  scope.route({
    method: 'POST',
    url: '/authn/shortlivedtokens',
    schema: {
      tags: ['authn'],
      summary: 'A token of at most 2 seconds for ?authentication-token= on GET requests (downloads)',
      response: { 200: ShortLivedTokenResponse, ...errorResponses(401, 403) },
    },
    handler: async (request, reply) => {
      const context = request.authnContext
      if (context.tokenKind === 'personal') throw authnErrors.accessDenied('A personal access token cannot create other tokens; send it as Authorization itself')
      if (!context.eperson || context.tokenKind !== 'login' || !context.claims) throw authnErrors.authenticationRequired(challenge(request))
      if (context.realEperson) throw authnErrors.accessDenied('Short-lived tokens cannot be created while acting on behalf of another user')
      const token = await tokens.issueShortLived(context.claims)
      return reply
        .status(200)
        .type('application/hal+json;charset=UTF-8')
        .send({ token, type: 'shortlivedtoken' as const, _links: { self: { href: `${apiBase(request)}/authn/shortlivedtokens` } } })
    },
  })

  scope.route({
    method: [...OTHER_METHODS],
    url: '/authn/shortlivedtokens',
    exposeHeadRoute: false,
    schema: { tags: ['authn'], summary: 'Not allowed since DSpace 7.5: use POST', response: errorResponses(405) },
    handler: async () => {
      throw authnErrors.methodNotAllowed('Only POST is allowed for short-lived token requests.', 'POST')
    },
  })
}
