import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Challenge } from '../../challenge.ts'
import { apiBase } from '../../context.ts'
import { errorResponses, HAL_CONTENT_TYPE, noBody, pageOf } from '../../hal.ts'
import type { AuditLog } from '../audit/index.ts'
import { credentialsCaller, requestActor } from '../auth-context/index.ts'
import type { EpersonsService } from '../epersons/index.ts'
import { CreatedTokenSchema, CreateTokenBody, PersonalTokenSchema, PersonalTokensPage, scopeOf, toTokenResponse } from './personal-tokens.schemas.ts'
import type { PersonalTokensService } from '../personal-tokens/index.ts'
import { listLink, listOwner, OwnerQuery } from './owner.ts'

const TokenParams = Type.Object({ id: Type.String({ pattern: '^pat_[0-9a-f]{24}$' }) })

export interface PersonalTokensRoutesOptions {
  personalTokens: PersonalTokensService
  epersons: EpersonsService
  challenge: Challenge
  audit: AuditLog
}

/** `/authn/tokens`: personal access tokens, created and managed by their logged-in owner (any, for an administrator). */
export const personalTokensRoutes: FastifyPluginAsyncTypebox<PersonalTokensRoutesOptions> = async (scope, { personalTokens, epersons, challenge, audit }) => {
  scope.post(
    '/authn/tokens',
    {
      schema: {
        tags: ['authn'],
        summary: 'Create a personal access token for a script (shown once); needs a login, not another token',
        body: CreateTokenBody,
        response: { 201: CreatedTokenSchema, ...errorResponses(400, 401, 403, 422) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const { name, expiresAt, scopes } = request.body
      const actor = requestActor(request, audit, caller, false)
      const { row, token } = await personalTokens.create({ epersonUuid: caller.uuid, name, expiresAt, scope: scopeOf(scopes) }, actor)
      const body = { ...toTokenResponse(apiBase(request), row), token }
      return reply.status(201).type(HAL_CONTENT_TYPE).header('location', body._links.self.href).header('cache-control', 'no-store').send(body)
    },
  )

  scope.get(
    '/authn/tokens',
    {
      schema: {
        tags: ['authn'],
        summary: "Your personal access tokens (never their secrets); an administrator may name another eperson's",
        querystring: OwnerQuery,
        response: { 200: PersonalTokensPage, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const { page = 0, size = 20 } = request.query
      const owner = await listOwner(epersons, caller, request.query.eperson)
      const { rows, total } = await personalTokens.list(owner, page, size)
      const base = apiBase(request)
      const self = listLink(`${base}/authn/tokens`, owner, caller, page, size)
      return reply.type(HAL_CONTENT_TYPE).send(pageOf('personalaccesstokens', rows.map((row) => toTokenResponse(base, row)), total, self, page, size))
    },
  )

  scope.get(
    '/authn/tokens/:id',
    {
      schema: {
        tags: ['authn'],
        summary: 'One personal access token (never its secret)',
        params: TokenParams,
        response: { 200: PersonalTokenSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const row = await personalTokens.find(request.params.id, { uuid: caller.uuid, admin: await epersons.isAdmin(caller.uuid) })
      return reply.type(HAL_CONTENT_TYPE).send(toTokenResponse(apiBase(request), row))
    },
  )

  scope.delete(
    '/authn/tokens/:id',
    {
      schema: {
        tags: ['authn'],
        summary: 'Revoke a personal access token: it is refused (401) from then on, on every instance',
        params: TokenParams,
        response: { 204: noBody(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      await personalTokens.revoke(request.params.id, requestActor(request, audit, caller, await epersons.isAdmin(caller.uuid)))
      return reply.status(204).send()
    },
  )
}
