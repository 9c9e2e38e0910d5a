import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { Type } from '@sinclair/typebox'
import type { Challenge } from '../../challenge.ts'
import { apiBase } from '../../context.ts'
import { errorResponses, HAL_CONTENT_TYPE, noBody, pageOf } from '../../hal.ts'
import type { AuditLog } from '../audit/index.ts'
import { credentialsCaller, requestActor } from '../auth-context/index.ts'
import type { EpersonsService } from '../epersons/index.ts'
import { type LoginService, loginClient, sendToken } from '../login/index.ts'
import { CeremonyOptionsSchema } from '../../../../core/http/webauthn.schemas.ts'
import { PasskeyLoginBody, PasskeySchema, PasskeysPage, RegisterPasskeyBody, toPasskeyResponse } from './passkeys.schemas.ts'
import { PASSKEY_METHOD, type PasskeysService } from '../passkeys/index.ts'
import { listLink, listOwner, OwnerQuery } from './owner.ts'

const PasskeyParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,1400}$' }) })

export interface PasskeysRoutesOptions {
  passkeys: PasskeysService
  login: LoginService
  epersons: EpersonsService
  challenge: Challenge
  audit: AuditLog
}

/**
 * `/authn/passkeys…`: register a passkey while logged in (options, then the browser's answer),
 * log in with one (options, then the browser's answer: a token as from POST /authn/login), list
 * and remove them.
 */
export const passkeysRoutes: FastifyPluginAsyncTypebox<PasskeysRoutesOptions> = async (scope, { passkeys, login, epersons, challenge, audit }) => {
  scope.post(
    '/authn/passkeys/registration/options',
    {
      schema: {
        tags: ['authn'],
        summary: 'Start registering a passkey for yourself: WebAuthn creation options (valid 5 minutes, once)',
        response: { 200: CeremonyOptionsSchema, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      return reply.header('cache-control', 'no-store').send(await passkeys.registrationOptions(caller))
    },
  )

  scope.post(
    '/authn/passkeys',
    {
      schema: {
        tags: ['authn'],
        summary: "Finish registering a passkey: the browser's answer to the creation options",
        body: RegisterPasskeyBody,
        response: { 201: PasskeySchema, ...errorResponses(400, 401, 403, 422) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const { name, credential } = request.body
      // The schema checked the shape; the library checks every byte of it.
      const row = await passkeys.register(caller, credential as RegistrationResponseJSON, name, requestActor(request, audit, caller, false))
      const body = toPasskeyResponse(apiBase(request), row)
      return reply.status(201).type(HAL_CONTENT_TYPE).header('location', body._links.self.href).send(body)
    },
  )

  scope.get(
    '/authn/passkeys',
    {
      schema: {
        tags: ['authn'],
        summary: "Your passkeys; an administrator may name another eperson's",
        querystring: OwnerQuery,
        response: { 200: PasskeysPage, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      const { page = 0, size = 20 } = request.query
      const owner = await listOwner(epersons, caller, request.query.eperson)
      const { rows, total } = await passkeys.list(owner, page, size)
      const base = apiBase(request)
      const self = listLink(`${base}/authn/passkeys`, owner, caller, page, size)
      return reply.type(HAL_CONTENT_TYPE).send(pageOf('passkeys', rows.map((row) => toPasskeyResponse(base, row)), total, self, page, size))
    },
  )

  scope.delete(
    '/authn/passkeys/:id',
    {
      schema: {
        tags: ['authn'],
        summary: 'Remove a passkey: it can no longer log in (sessions it started stay until revoked or logged out)',
        params: PasskeyParams,
        response: { 204: noBody(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = credentialsCaller(request, challenge)
      await passkeys.remove(request.params.id, requestActor(request, audit, caller, await epersons.isAdmin(caller.uuid)))
      return reply.status(204).send()
    },
  )

  scope.post(
    '/authn/passkeys/login/options',
    {
      schema: {
        tags: ['authn'],
        summary: 'Start a passkey login: WebAuthn request options (valid 5 minutes, once); the `location` of the passkey scheme in WWW-Authenticate',
        response: { 200: CeremonyOptionsSchema, ...errorResponses(403, 404) },
      },
    },
    async (_request, reply) => reply.header('cache-control', 'no-store').send(await passkeys.loginOptions()),
  )

  scope.post(
    '/authn/passkeys/login',
    {
      schema: {
        tags: ['authn'],
        summary: "Log in with a passkey: the browser's answer to the request options; 200 with the token in Authorization, as POST /authn/login",
        body: PasskeyLoginBody,
        response: { 200: noBody({ description: 'The token is in the Authorization response header' }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const epersonUuid = await passkeys.verifyLogin(request.body.credential as AuthenticationResponseJSON)
      const token = await login.verifiedLogin(epersonUuid, PASSKEY_METHOD, loginClient(request), challenge(request))
      return sendToken(request, reply, token)
    },
  )
}
