import type { FastifyRequest } from 'fastify'
import type { Challenge } from '../../challenge.ts'
import { authnErrors } from '../../errors.ts'
import { type Actor, actorFor, type AuditLog } from '../audit/index.ts'
import type { PublicEpersonRow } from '../epersons/index.ts'

/**
 * The caller of a route that manages credentials (sessions, personal access tokens, passkeys):
 * someone logged in with a login token, as themselves. A personal access token never manages
 * credentials (a leaked script token cannot mint more, nor end the owner's sessions), nor does a
 * short-lived token, nor an administrator acting on behalf of someone.
 */
export function credentialsCaller(request: FastifyRequest, challenge: Challenge): PublicEpersonRow {
  const context = request.authnContext
  if (!context.eperson) throw authnErrors.authenticationRequired(challenge(request))
  if (context.tokenKind === 'personal') {
    throw authnErrors.accessDenied('A personal access token cannot manage sessions, personal access tokens or passkeys; log in to do that')
  }
  if (context.realEperson) throw authnErrors.accessDenied('Sessions, personal access tokens and passkeys cannot be managed while acting on behalf of another user')
  if (context.tokenKind !== 'login') throw authnErrors.accessDenied('A short-lived token cannot be used for this request')
  return context.eperson
}

/** The caller as the services see it, with the audit trail its changes are written to. */
export function requestActor(request: FastifyRequest, audit: AuditLog, caller: PublicEpersonRow, admin: boolean): Actor {
  return actorFor(audit, request.log, caller, admin)
}
