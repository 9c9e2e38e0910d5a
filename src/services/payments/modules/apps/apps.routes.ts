import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { currentApp } from '../../http/auth.ts'
import { responses, TAGS } from '../../http/route-kit.ts'
import { CreateAppBody, CreateAppResponse, IdentityResponse } from './apps.schemas.ts'
import { type AppsService, toIdentity } from './apps.service.ts'

export function appsRoutes(apps: AppsService): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/apps',
      {
        // Creating an app needs no credentials; a junk Authorization header is ignored.
        config: { public: true },
        schema: { tags: TAGS, summary: 'Create an app (its API key is shown only here)', body: CreateAppBody, response: responses({ 201: CreateAppResponse }) },
      },
      async (request, reply) => reply.code(201).send({ app: await apps.create(request.body.name) }),
    )

    app.get('/me', { config: { appOnly: true }, schema: { tags: TAGS, summary: 'The app making the request', response: responses({ 200: IdentityResponse }) } }, async (request) => ({
      identity: toIdentity(currentApp(request)),
    }))
  }
}
