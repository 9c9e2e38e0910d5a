import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { currentApp } from '../../http/auth.ts'
import { booleanFilter, EmptyBody, PageQuery, responses, TAGS } from '../../http/route-kit.ts'
import {
  AddAppBody,
  CreateMerchantBody,
  IdentityParams,
  InviteUserBody,
  InviteUserResponse,
  MerchantAppParams,
  MerchantAppSchema,
  MerchantParams,
  MerchantResponse,
  MerchantSchema,
  MerchantUserParams,
  MerchantUserSchema,
  UpdateMerchantBody,
} from './merchants.schemas.ts'
import type { MerchantsService } from './merchants.service.ts'

export function merchantsRoutes(merchants: MerchantsService): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/merchants',
      {
        // The new merchant's first member is the calling app; a merchant user is invited to one.
        config: { appOnly: true },
        schema: {
          tags: TAGS,
          summary: 'Create a merchant (the calling app becomes a member)',
          body: CreateMerchantBody,
          response: responses({ 201: MerchantResponse }),
        },
      },
      async (request, reply) => reply.code(201).send({ merchant: await merchants.create(currentApp(request).id, request.body) }),
    )

    app.put(
      '/merchants/:merchantId',
      {
        schema: {
          tags: TAGS,
          summary: "Change a merchant's name, e-mail or descriptor",
          params: MerchantParams,
          body: UpdateMerchantBody,
          response: responses({ 204: EmptyBody }),
        },
      },
      async (request, reply) => {
        await merchants.update(currentApp(request).id, request.params.merchantId, request.body)
        return reply.code(204).send()
      },
    )

    app.get(
      '/merchants/:merchantId',
      { schema: { tags: TAGS, summary: 'Fetch a merchant', params: MerchantParams, response: responses({ 200: MerchantResponse }) } },
      async (request) => ({ merchant: await merchants.get(currentApp(request).id, request.params.merchantId) }),
    )

    app.get(
      '/identities/:appId/merchants',
      {
        schema: {
          tags: TAGS,
          summary: 'The merchants of an app (newest first; filter[test]=y|n)',
          params: IdentityParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(MerchantSchema) }),
        },
      },
      async (request) => merchants.listOfIdentity(currentApp(request).id, request.params.appId, request.query, { test: booleanFilter(request.query, 'test') }),
    )

    app.post(
      '/merchants/:merchantId/users',
      {
        schema: {
          tags: TAGS,
          summary: 'Invite a person by e-mail (an invitation is sent unless already a member)',
          params: MerchantParams,
          body: InviteUserBody,
          response: responses({ 201: InviteUserResponse }),
        },
      },
      async (request, reply) => reply.code(201).send(await merchants.inviteUser(currentApp(request).id, request.params.merchantId, request.body.email)),
    )

    app.delete(
      '/merchants/:merchantId/users/:userId',
      { schema: { tags: TAGS, summary: 'Revoke a user from a merchant', params: MerchantUserParams, response: responses({ 204: EmptyBody }) } },
      async (request, reply) => {
        await merchants.revokeUser(currentApp(request).id, request.params.merchantId, request.params.userId)
        return reply.code(204).send()
      },
    )

    app.get(
      '/merchants/:merchantId/users',
      {
        schema: {
          tags: TAGS,
          summary: 'The users of a merchant',
          params: MerchantParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(MerchantUserSchema) }),
        },
      },
      async (request) => merchants.listUsers(currentApp(request).id, request.params.merchantId, request.query),
    )

    app.post(
      '/merchants/:merchantId/apps',
      { schema: { tags: TAGS, summary: 'Add an app to a merchant', params: MerchantParams, body: AddAppBody, response: responses({ 201: EmptyBody }) } },
      async (request, reply) => {
        await merchants.addApp(currentApp(request).id, request.params.merchantId, request.body.appId)
        return reply.code(201).send()
      },
    )

    app.delete(
      '/merchants/:merchantId/apps/:appId',
      { schema: { tags: TAGS, summary: 'Revoke an app from a merchant', params: MerchantAppParams, response: responses({ 204: EmptyBody }) } },
      async (request, reply) => {
        await merchants.revokeApp(currentApp(request).id, request.params.merchantId, request.params.appId)
        return reply.code(204).send()
      },
    )

    app.get(
      '/merchants/:merchantId/apps',
      {
        schema: {
          tags: TAGS,
          summary: 'The apps of a merchant',
          params: MerchantParams,
          querystring: PageQuery,
          response: responses({ 200: Type.Array(MerchantAppSchema) }),
        },
      },
      async (request) => merchants.listApps(currentApp(request).id, request.params.merchantId, request.query),
    )
  }
}
