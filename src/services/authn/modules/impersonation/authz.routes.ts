import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { apiBase, UUID_PATTERN } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { errorResponses, HAL_CONTENT_TYPE, LinkSchema, pageSchema } from '../../hal.ts'
import type { EpersonsService } from '../epersons/index.ts'

const LOGIN_ON_BEHALF_OF = 'loginOnBehalfOf'

const AuthorizationSchema = Type.Object({
  id: Type.String(),
  type: Type.Literal('authorization'),
  _links: Type.Object({ self: LinkSchema, eperson: LinkSchema, feature: LinkSchema, object: LinkSchema }),
})
const AuthorizationsPage = pageSchema('authorizations', AuthorizationSchema)

const SiteParams = Type.Object({ uuid: Type.String() })

const SiteSchema = Type.Object({
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  handle: Type.Null(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  type: Type.Literal('site'),
  _links: Type.Object({ self: LinkSchema }),
})

/**
 * The one authorization feature this service knows, `loginOnBehalfOf`, answered as DSpace's
 * LoginOnBehalfOfFeature: on the site, true for an administrator when login-as is enabled; on an
 * eperson, additionally the target must be neither the caller nor an administrator; on anything
 * else, false. A false answer is an empty page, not an error.
 */
export interface AuthzRoutesOptions {
  epersons: EpersonsService
  siteUuid: string
  loginAs: boolean
}

export const authzRoutes: FastifyPluginAsyncTypebox<AuthzRoutesOptions> = async (scope, deps) => {
  const { epersons, siteUuid } = deps

  async function evaluate(request: FastifyRequest, uri: string, subject: string | undefined): Promise<{ objectType: string; objectId: string } | undefined> {
    if (!deps.loginAs || !subject || !(await epersons.isAdmin(subject))) return undefined
    const path = (() => {
      try {
        return new URL(uri, `${request.protocol}://${request.host}`).pathname
      } catch {
        return ''
      }
    })()
    const site = /\/api\/core\/sites\/([^/]+)$/.exec(path)
    if (site) return site[1] === siteUuid ? { objectType: 'core.site', objectId: siteUuid } : undefined
    const eperson = /\/api\/eperson\/epersons\/([^/]+)$/.exec(path)
    if (eperson && UUID_PATTERN.test(eperson[1])) {
      const target = await epersons.findByUuid(eperson[1].toLowerCase())
      if (!target || target.uuid === subject || (await epersons.isAdmin(target.uuid))) return undefined
      return { objectType: 'eperson.eperson', objectId: target.uuid }
    }
    return undefined
  }

  scope.get(
    '/authz/authorizations/search/object',
    {
      schema: {
        tags: ['authn'],
        summary: 'Authorizations of the current (or given) eperson on an object, for the loginOnBehalfOf feature',
        querystring: Type.Object({
          uri: Type.String({ minLength: 1 }),
          feature: Type.Optional(Type.String()),
          eperson: Type.Optional(Type.String({ pattern: UUID_PATTERN.source })),
          page: Type.Optional(Type.Integer({ minimum: 0 })),
          size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          projection: Type.Optional(Type.String()),
          embed: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
        }),
        response: { 200: AuthorizationsPage, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const query = request.query
      const caller = request.authnContext.eperson
      let subject = caller?.uuid
      if (query.eperson !== undefined && query.eperson.toLowerCase() !== subject) {
        // Asking about somebody else is for administrators only, as in DSpace.
        if (!caller) throw authnErrors.authenticationRequired()
        if (!(await epersons.isAdmin(caller.uuid))) throw authnErrors.accessDenied()
        subject = query.eperson.toLowerCase()
      }
      const base = apiBase(request)
      const wantsFeature = query.feature === undefined || query.feature === LOGIN_ON_BEHALF_OF
      const found = wantsFeature ? await evaluate(request, query.uri, subject) : undefined
      const size = query.size ?? 20
      const self = `${base}/authz/authorizations/search/object?${new URLSearchParams({ uri: query.uri, ...(query.feature ? { feature: query.feature } : {}) })}`
      const items =
        found && subject
          ? [
              {
                id: `${subject}_${LOGIN_ON_BEHALF_OF}_${found.objectType}_${found.objectId}`,
                type: 'authorization' as const,
                _links: {
                  self: { href: `${base}/authz/authorizations/${subject}_${LOGIN_ON_BEHALF_OF}_${found.objectType}_${found.objectId}` },
                  eperson: { href: `${base}/eperson/epersons/${subject}` },
                  feature: { href: `${base}/authz/features/${LOGIN_ON_BEHALF_OF}` },
                  object: { href: query.uri },
                },
              },
            ]
          : []
      return reply.type(HAL_CONTENT_TYPE).send({
        ...(items.length > 0 ? { _embedded: { authorizations: items } } : {}),
        page: { number: 0, size, totalPages: items.length > 0 ? 1 : 0, totalElements: items.length },
        _links: { self: { href: self } },
      })
    },
  )

  scope.get(
    '/core/sites/:uuid',
    {
      schema: {
        tags: ['authn'],
        summary: 'The site object (the target of site-wide authorization features)',
        params: SiteParams,
        response: { 200: SiteSchema, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params
      if (uuid !== siteUuid) throw authnErrors.notFound(`No site ${uuid}`)
      return reply.type(HAL_CONTENT_TYPE).send(siteResponse(apiBase(request), siteUuid))
    },
  )

  scope.get(
    '/core/sites',
    { schema: { tags: ['authn'], summary: 'The one site', response: { 200: pageSchema('sites', SiteSchema) } } },
    async (request, reply) => {
      const base = apiBase(request)
      return reply.type(HAL_CONTENT_TYPE).send({
        _embedded: { sites: [siteResponse(base, siteUuid)] },
        page: { number: 0, size: 20, totalPages: 1, totalElements: 1 },
        _links: { self: { href: `${base}/core/sites` } },
      })
    },
  )
}

function siteResponse(base: string, uuid: string) {
  return { id: uuid, uuid, name: 'Triad', handle: null, metadata: {}, type: 'site' as const, _links: { self: { href: `${base}/core/sites/${uuid}` } } }
}
