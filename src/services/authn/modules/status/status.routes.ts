import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Static, Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { apiBase } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { errorResponses, HAL_CONTENT_TYPE, LinkSchema, nullable, pageSchema, toPage } from '../../hal.ts'
import { EpersonSchema, GroupSchema, toEpersonResponse, toGroupResponse } from '../epersons/index.ts'
import type { Challenge } from '../../challenge.ts'
import type { SpecialGroupsService } from '../special-groups/index.ts'

const SpecialGroupsPage = pageSchema('specialGroups', GroupSchema)

const StatusResponse = Type.Object({
  id: Type.Null(),
  okay: Type.Boolean(),
  authenticated: Type.Boolean(),
  authenticationMethod: nullable(Type.String()),
  type: Type.Literal('status'),
  _links: Type.Object({ self: LinkSchema, eperson: LinkSchema, specialGroups: LinkSchema }),
  _embedded: Type.Optional(
    Type.Object({
      eperson: Type.Optional(nullable(EpersonSchema)),
      specialGroups: Type.Optional(SpecialGroupsPage),
    }),
  ),
})

const AuthnRootResponse = Type.Object({
  type: Type.Literal('authn'),
  _links: Type.Object({ login: LinkSchema, logout: LinkSchema, status: LinkSchema, shortlivedtokens: LinkSchema, self: LinkSchema }),
})

const StatusQuery = Type.Object({
  projection: Type.Optional(Type.String({ description: '`full` or `default`; both embed eperson and specialGroups' })),
  embed: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'embed only these (eperson, specialGroups)' })),
})

const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20 })),
  projection: Type.Optional(Type.String()),
})

const PROJECTIONS = new Set(['full', 'default'])
// Distinct renderings kept per session snapshot (URL variants: prefix, host, query string).
const RENDERINGS_PER_SESSION = 8
const DEFAULT_PAGE_SIZE = 20

export interface StatusRoutesOptions {
  specialGroups: SpecialGroupsService
  challenge: Challenge
}

export const statusRoutes: FastifyPluginAsyncTypebox<StatusRoutesOptions> = async (scope, { specialGroups, challenge }) => {

  async function specialGroupsPage(request: FastifyRequest, page = 0, size = DEFAULT_PAGE_SIZE) {
    const base = apiBase(request)
    const rows = await specialGroups.describe(request.authnContext.specialGroups)
    return toPage(
      'specialGroups',
      rows.map((row) => toGroupResponse(base, row)),
      `${base}/authn/status/specialGroups`,
      page,
      size,
    )
  }

  // A client polls its status with the same token again and again: the body is rendered once per
  // session snapshot (see AuthnContext.sessionSnapshot), so it is never staler than the session
  // data the request was authenticated with.
  const rendered = new WeakMap<object, Map<string, string>>()

  scope.get(
    '/authn',
    { schema: { tags: ['authn'], summary: 'Links to the authentication endpoints', response: { 200: AuthnRootResponse } } },
    async (request, reply) => {
      const base = `${apiBase(request)}/authn`
      return reply.type(HAL_CONTENT_TYPE).send({
        type: 'authn' as const,
        _links: {
          login: { href: `${base}/login` },
          logout: { href: `${base}/logout` },
          status: { href: `${base}/status` },
          shortlivedtokens: { href: `${base}/shortlivedtokens` },
          self: { href: base },
        },
      })
    },
  )

  // The reply is the body rendered once per session snapshot (a string), or the object it came
  // from; the generic says so, the query's type is the schema's own.
  scope.get<{ Querystring: Static<typeof StatusQuery>; Reply: Static<typeof StatusResponse> | string }>(
    '/authn/status',
    {
      schema: {
        tags: ['authn'],
        summary: 'Who the request is authenticated as (always 200)',
        querystring: StatusQuery,
        response: { 200: StatusResponse, ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      const { projection, embed } = request.query
      if (projection !== undefined && !PROJECTIONS.has(projection)) throw authnErrors.badRequest(`The projection provided is not supported: ${projection}`)
      const wanted = embed === undefined ? undefined : new Set((Array.isArray(embed) ? embed : [embed]).map((item) => item.split('/')[0]))
      const context = request.authnContext
      const snapshot = context.sessionSnapshot
      const renderKey = snapshot && `${request.protocol}|${request.host}|${request.url}|${context.specialGroups.join(',')}`
      const cached = snapshot && renderKey ? rendered.get(snapshot)?.get(renderKey) : undefined
      if (cached !== undefined) return reply.type(HAL_CONTENT_TYPE).send(cached)
      const base = apiBase(request)
      const eperson = context.eperson
      const embedded: { eperson?: ReturnType<typeof toEpersonResponse> | null; specialGroups?: Awaited<ReturnType<typeof specialGroupsPage>> } = {}
      if (!wanted || wanted.has('eperson')) embedded.eperson = eperson ? toEpersonResponse(base, eperson) : null
      if (!wanted || wanted.has('specialGroups')) embedded.specialGroups = await specialGroupsPage(request)
      if (!eperson) reply.header('www-authenticate', challenge(request))
      const body = String(
        reply.serialize({
          id: null,
          okay: true,
          authenticated: eperson !== undefined,
          authenticationMethod: eperson ? (context.method ?? null) : null,
          type: 'status' as const,
          _links: {
            // DSpace links a logged-in user's record directly (DSpace#8274 keeps the quirk for anonymous).
            eperson: { href: eperson ? `${base}/eperson/epersons/${eperson.uuid}` : `${base}/authn/status/eperson` },
            specialGroups: { href: `${base}/authn/status/specialGroups` },
            self: { href: `${base}/authn/status` },
          },
          ...(Object.keys(embedded).length > 0 ? { _embedded: embedded } : {}),
        }),
      )
      if (snapshot && renderKey) {
        let renderings = rendered.get(snapshot)
        if (!renderings || renderings.size >= RENDERINGS_PER_SESSION) {
          renderings = new Map()
          rendered.set(snapshot, renderings)
        }
        renderings.set(renderKey, body)
      }
      return reply.type(HAL_CONTENT_TYPE).send(body)
    },
  )

  scope.get(
    '/authn/status/specialGroups',
    {
      schema: {
        tags: ['authn'],
        summary: 'Special groups of this request (login method and client address)',
        querystring: PageQuery,
        response: { 200: SpecialGroupsPage },
      },
    },
    async (request, reply) => {
      const { page, size } = request.query
      return reply.type(HAL_CONTENT_TYPE).send(await specialGroupsPage(request, page, size))
    },
  )
}
