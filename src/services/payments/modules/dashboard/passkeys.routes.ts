import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { coreError } from '../../../../core/errors/codes.ts'
import { AuthenticationCredentialSchema, CeremonyOptionsSchema, RegistrationCredentialSchema } from '../../../../core/http/webauthn.schemas.ts'
import type { RelyingParty } from '../../../../core/security/webauthn.ts'
import type { PaymentsConfig } from '../../config.ts'
import { currentActor } from '../../http/auth.ts'
import { EmptyBody, responses } from '../../http/route-kit.ts'
import type { DashboardUser } from './dashboard.service.ts'
import { PasskeyParams, PasskeyResponse, PasskeysResponse, SessionResponse } from './dashboard.schemas.ts'
import { dashboardBaseUrl, OWN_SITE_ONLY, replyWithSession, SIGN_IN_ROUTE } from './dashboard-site.ts'
import type { DashboardPasskeys } from './passkeys.service.ts'

const TAGS = ['payments', 'dashboard']
/** The relying party of this dashboard: its host name and origin (PAYMENTS_PUBLIC_URL, or a loopback request's own). */
function relyingPartyOf(request: FastifyRequest, publicUrl: string | undefined): RelyingParty {
  const base = new URL(dashboardBaseUrl(request, publicUrl))
  return { rpId: base.hostname, origins: [base.origin] }
}

/** The merchant user of a dashboard session; an app's key or key session is refused. */
function currentUser(request: FastifyRequest): DashboardUser {
  const actor = currentActor(request)
  if (actor.type !== 'user') throw coreError('forbidden', 'Only a merchant user signed in to the dashboard has passkeys')
  return { id: actor.id, email: actor.email }
}

/**
 * Passkeys of merchant users (issue 30): a signed-in user registers one (options, then the
 * browser's answer, with the session cookie and its CSRF token), lists and removes their own,
 * and signs in with one later (options, then the browser's answer: the same session cookie as
 * an e-mailed link gives).
 */
export function dashboardPasskeyRoutes(passkeys: DashboardPasskeys, deps: { config: PaymentsConfig }): FastifyPluginAsync {
  const publicUrl = deps.config.publicUrl
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/dashboard/passkeys/registration/options',
      {
        schema: {
          tags: TAGS,
          summary: 'A signed-in merchant user starts adding a passkey: WebAuthn creation options (5 minutes, once)',
          response: responses({ 200: CeremonyOptionsSchema }),
        },
      },
      async (request, reply) => reply.header('cache-control', 'no-store').send(await passkeys.registrationOptions(currentUser(request), relyingPartyOf(request, publicUrl))),
    )

    app.post(
      '/dashboard/passkeys',
      {
        schema: {
          tags: TAGS,
          summary: "A signed-in merchant user finishes adding a passkey: the browser's answer to the creation options",
          body: Type.Object({ name: Type.Optional(Type.String({ maxLength: 100 })), credential: RegistrationCredentialSchema }),
          response: responses({ 201: PasskeyResponse }),
        },
      },
      async (request, reply) => {
        // The schema checked the shape; the library checks every byte of it.
        const credential = request.body.credential as RegistrationResponseJSON
        const passkey = await passkeys.register(currentUser(request), credential, request.body.name, relyingPartyOf(request, publicUrl))
        return reply.code(201).send({ passkey })
      },
    )

    app.get(
      '/dashboard/passkeys',
      {
        schema: {
          tags: TAGS,
          summary: "A signed-in merchant user's own passkeys: name, when added, when last used to sign in",
          response: responses({ 200: PasskeysResponse }),
        },
      },
      async (request, reply) => reply.header('cache-control', 'no-store').send({ passkeys: await passkeys.list(currentUser(request)) }),
    )

    app.delete(
      '/dashboard/passkeys/:passkeyId',
      {
        config: OWN_SITE_ONLY,
        schema: {
          tags: TAGS,
          summary: "A signed-in merchant user removes one of their own passkeys (X-CSRF-Token, this site only; another user's is a 404)",
          params: PasskeyParams,
          response: responses({ 204: EmptyBody }),
        },
      },
      async (request, reply) => {
        await passkeys.remove(currentUser(request), request.params.passkeyId)
        return reply.code(204).send()
      },
    )

    app.post(
      '/dashboard/passkeys/login/options',
      {
        config: SIGN_IN_ROUTE,
        schema: { tags: TAGS, summary: 'Start signing in with a passkey: WebAuthn request options (5 minutes, once)', response: responses({ 200: CeremonyOptionsSchema }) },
      },
      async (request, reply) =>
        reply.header('cache-control', 'no-store').send(await passkeys.loginOptions(relyingPartyOf(request, publicUrl))),
    )

    app.post(
      '/dashboard/session/passkey',
      {
        config: SIGN_IN_ROUTE,
        schema: {
          tags: TAGS,
          summary: "Sign in as a merchant user with a passkey (the browser's answer to the request options): sets the session cookie",
          body: Type.Object({ credential: AuthenticationCredentialSchema }),
          response: responses({ 201: SessionResponse }),
        },
      },
      async (request, reply) => {
        const credential = request.body.credential as AuthenticationResponseJSON
        return replyWithSession(request, reply, publicUrl, await passkeys.signIn(credential, relyingPartyOf(request, publicUrl)))
      },
    )
  }
}
