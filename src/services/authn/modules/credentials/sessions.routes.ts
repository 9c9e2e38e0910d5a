import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Challenge } from '../../challenge.ts'
import { apiBase, UUID_PATTERN } from '../../context.ts'
import { errorResponses, HAL_CONTENT_TYPE, noBody, pageOf } from '../../hal.ts'
import type { AuditLog } from '../audit/index.ts'
import { credentialsCaller, requestActor } from '../auth-context/index.ts'
import type { EpersonsService } from '../epersons/index.ts'
import type { SessionsService } from '../sessions/index.ts'
import { listLink, listOwner, OwnerQuery } from './owner.ts'
import { SessionSchema, SessionsPage, toSessionResponse } from './sessions.schemas.ts'

const SessionParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN.source }) })

export interface SessionsRoutesOptions {
  sessions: SessionsService
  epersons: EpersonsService
  challenge: Challenge
  audit: AuditLog
}

/** `GET/DELETE /authn/sessions[/{id}]`: the caller's sessions (devices), or another eperson's for an administrator. */
export const sessionsRoutes: FastifyPluginAsyncTypebox<SessionsRoutesOptions> = async (scope, { sessions, epersons, challenge, audit }) => {
  scope.get(
    '/authn/sessions',
    {
      schema: {
        tags: ['authn'],
        summary: "Your sessions, one per login and device (the current one marked); an administrator may name another eperson's",
        querystring: OwnerQuery,
        response: { 200: SessionsPage, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const { page = 0, size = 20 } = request.query
      const owner = await listOwner(epersons, caller, request.query.eperson)
      const { rows, total } = await sessions.list(owner, page, size)
      const base = apiBase(request)
      const current = request.authnContext.claims?.sid
      const self = listLink(`${base}/authn/sessions`, owner, caller, page, size)
      return reply.type(HAL_CONTENT_TYPE).send(pageOf('sessions', rows.map((row) => toSessionResponse(base, row, current)), total, self, page, size))
    },
  )

  scope.get(
    '/authn/sessions/:id',
    {
      schema: {
        tags: ['authn'],
        summary: 'One session (yours, or anyone’s for an administrator)',
        params: SessionParams,
        response: { 200: SessionSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const row = await sessions.find(request.params.id.toLowerCase(), { uuid: caller.uuid, admin: await epersons.isAdmin(caller.uuid) })
      return reply.type(HAL_CONTENT_TYPE).send(toSessionResponse(apiBase(request), row, request.authnContext.claims?.sid))
    },
  )

  scope.delete(
    '/authn/sessions/:id',
    {
      schema: {
        tags: ['authn'],
        summary: 'Revoke one session: its tokens stop working on every instance (logout ends all of them)',
        params: SessionParams,
        response: { 204: noBody(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const actor = requestActor(request, audit, caller, await epersons.isAdmin(caller.uuid))
      await sessions.revoke(request.params.id.toLowerCase(), actor)
      return reply.status(204).send()
    },
  )
}
