import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { FastifyRequest } from 'fastify'
import { apiBase, UUID_PATTERN } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { errorResponses, HAL_CONTENT_TYPE, noBody } from '../../hal.ts'
import { EpersonSchema, GroupSchema, toEpersonResponse, toGroupResponse } from './epersons.schemas.ts'
import type { Challenge } from '../../challenge.ts'
import { epersonNotFound, groupNotFound } from './epersons.errors.ts'
import type { PublicEpersonRow } from './epersons.repository.ts'
import type { EpersonsService } from './epersons.service.ts'

const UuidParams = Type.Object({ uuid: Type.String({ pattern: UUID_PATTERN.source }) })

const MetadataInput = Type.Record(Type.String(), Type.Array(Type.Object({ value: Type.String() }, { additionalProperties: true })))

const CreateEpersonBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    canLogIn: Type.Optional(Type.Boolean()),
    requireCertificate: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(MetadataInput),
    type: Type.Optional(Type.Literal('eperson')),
  },
  { additionalProperties: true },
)

// DSpace's JSON Patch forms: password as a string (7.0–7.5) or {new_password, current_password} (7.6+).
const PatchOperation = Type.Object({
  op: Type.Union([Type.Literal('replace'), Type.Literal('add')]),
  path: Type.Union([Type.Literal('/password'), Type.Literal('/canLogIn')]),
  // Checked in the handler: a union here would let the validator's type coercion turn `false` into "false".
  value: Type.Unknown(),
})
const PatchBody = Type.Array(PatchOperation, { minItems: 1, maxItems: 10 })

const PasswordObject = Type.Object({ new_password: Type.String(), current_password: Type.Optional(Type.String()) })

/** A /password operation's value: a string (DSpace 7.0–7.5) or {new_password, current_password} (7.6+), strings only. */
function passwordChange(value: unknown): { next: string; current?: string } | undefined {
  if (typeof value === 'string') return { next: value }
  if (!Value.Check(PasswordObject, value)) return undefined
  return { next: value.new_password, current: value.current_password }
}

function firstValue(metadata: Record<string, Array<{ value: string }>> | undefined, key: string): string | undefined {
  return metadata?.[key]?.[0]?.value
}

export interface EpersonsRoutesOptions {
  epersons: EpersonsService
  challenge: Challenge
}

export const epersonsRoutes: FastifyPluginAsyncTypebox<EpersonsRoutesOptions> = async (scope, { epersons, challenge }) => {

  function requireUser(request: FastifyRequest): PublicEpersonRow {
    const eperson = request.authnContext.eperson
    if (!eperson) throw authnErrors.authenticationRequired(challenge(request))
    return eperson
  }

  async function requireAdmin(request: FastifyRequest): Promise<PublicEpersonRow> {
    const eperson = requireUser(request)
    if (!(await epersons.isAdmin(eperson.uuid))) throw authnErrors.accessDenied()
    return eperson
  }

  scope.get(
    '/eperson/epersons/:uuid',
    {
      schema: {
        tags: ['authn'],
        summary: 'An eperson (yourself, or anyone for an administrator)',
        params: UuidParams,
        response: { 200: EpersonSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params
      const caller = requireUser(request)
      const id = uuid.toLowerCase()
      // Anyone but an administrator gets 403 for every other uuid, existing or not.
      if (caller.uuid !== id && !(await epersons.isAdmin(caller.uuid))) throw authnErrors.accessDenied()
      const found = await epersons.findByUuid(id)
      if (!found) throw epersonNotFound(id)
      return reply.type(HAL_CONTENT_TYPE).send(toEpersonResponse(apiBase(request), found))
    },
  )

  scope.post(
    '/eperson/epersons',
    {
      schema: {
        tags: ['authn'],
        summary: 'Create an eperson (administrators)',
        body: CreateEpersonBody,
        response: { 201: EpersonSchema, ...errorResponses(400, 401, 403, 422) },
      },
    },
    async (request, reply) => {
      await requireAdmin(request)
      const body = request.body
      const created = await epersons.create({
        email: body.email,
        password: body.password,
        canLogIn: body.canLogIn ?? true,
        firstName: firstValue(body.metadata, 'eperson.firstname'),
        lastName: firstValue(body.metadata, 'eperson.lastname'),
      })
      const response = toEpersonResponse(apiBase(request), created)
      return reply.status(201).type(HAL_CONTENT_TYPE).header('location', response._links.self.href).send(response)
    },
  )

  scope.patch(
    '/eperson/epersons/:uuid',
    {
      schema: {
        tags: ['authn'],
        summary: 'Change the password or canLogIn of an eperson (JSON Patch)',
        params: UuidParams,
        body: PatchBody,
        response: { 200: EpersonSchema, ...errorResponses(400, 401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params
      const id = uuid.toLowerCase()
      const caller = requireUser(request)
      const admin = await epersons.isAdmin(caller.uuid)
      if (!admin && caller.uuid !== id) throw authnErrors.accessDenied()
      const operations = request.body
      if (!(await epersons.findByUuid(id))) throw epersonNotFound(id)
      for (const operation of operations) {
        if (operation.path === '/canLogIn') {
          if (!admin) throw authnErrors.accessDenied()
          if (typeof operation.value !== 'boolean') throw authnErrors.badRequest('/canLogIn takes true or false')
          await epersons.setCanLogIn(id, operation.value)
          continue
        }
        if (request.authnContext.tokenKind === 'personal') throw authnErrors.accessDenied('A personal access token cannot change a password; log in to do that')
        const change = passwordChange(operation.value)
        if (!change) throw authnErrors.badRequest('/password takes a string or {new_password, current_password} with string values')
        if (!admin) {
          // Users change their own password only by proving they know the current one.
          if (change.current === undefined || !(await epersons.checkCurrentPassword(id, change.current)))
            throw authnErrors.accessDenied('The current password is wrong')
        }
        await epersons.setPassword(id, change.next)
      }
      const updated = await epersons.findByUuid(id)
      if (!updated) throw epersonNotFound(id)
      return reply.type(HAL_CONTENT_TYPE).send(toEpersonResponse(apiBase(request), updated))
    },
  )

  scope.delete(
    '/eperson/epersons/:uuid',
    {
      schema: {
        tags: ['authn'],
        summary: 'Delete an eperson (administrators)',
        params: UuidParams,
        response: { 204: noBody(), ...errorResponses(400, 401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const caller = await requireAdmin(request)
      const { uuid } = request.params
      const id = uuid.toLowerCase()
      if (id === caller.uuid) throw authnErrors.unprocessable('Administrators cannot delete themselves')
      await epersons.remove(id)
      return reply.status(204).send()
    },
  )

  scope.get(
    '/eperson/groups/:uuid',
    {
      schema: {
        tags: ['authn'],
        summary: 'A group (its members, and administrators)',
        params: UuidParams,
        response: { 200: GroupSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params
      const id = uuid.toLowerCase()
      const caller = requireUser(request)
      const allowed = request.authnContext.specialGroups.includes(id) || (await epersons.isMember(caller.uuid, id)) || (await epersons.isAdmin(caller.uuid))
      if (!allowed) throw authnErrors.accessDenied()
      const group = await epersons.findGroup(id)
      if (!group) throw groupNotFound(id)
      return reply.type(HAL_CONTENT_TYPE).send(toGroupResponse(apiBase(request), group))
    },
  )
}
