import type { FastifyRequest } from 'fastify'

/** One request made by an administrator on behalf of another eperson. */
export interface LoginAsEntry {
  administrator: string
  administratorEmail: string
  onBehalfOf: string
  onBehalfOfEmail: string
  method: string
  path: string
}

/** What changed: a session, personal access token or passkey created or ended. */
type ChangeAction = 'session.revoke' | 'token.create' | 'token.revoke' | 'passkey.register' | 'passkey.remove'

/** One change to an eperson's credentials, by whom (an eperson, or the operator at the command line). */
export interface ChangeEntry {
  action: ChangeAction
  /** The eperson who made the change, or `operator` for the command line. */
  actor: string
  actorEmail: string | null
  /** Whose credential it was. */
  eperson: string
  /** The id of the session, token or passkey. */
  target: string
}

/** Where a change is written: a request's logger, or the command line's. */
interface AuditLogger {
  info(object: object, message: string): void
}

/**
 * The one audit trail of authn: acting on behalf of someone, and every change to sessions,
 * personal access tokens and passkeys. The default writes to the request log; tests pass a fake.
 */
export interface AuditLog {
  loginAs(entry: LoginAsEntry, request: FastifyRequest): void
  change(entry: ChangeEntry, log: AuditLogger): void
}

/** One info line per event, tagged `audit: "<action>"` (and carrying the request id): greppable and shipped with the logs. */
export const requestLogAudit: AuditLog = {
  loginAs(entry, request) {
    request.log.info({ audit: 'login-as', ...entry }, 'request made on behalf of another eperson')
  },
  change(entry, log) {
    log.info({ audit: entry.action, ...entry }, `authn ${entry.action}`)
  },
}

/**
 * Who makes a change, as the services see it: an eperson (administrator or not) over HTTP, or the
 * operator at the command line. `record` completes a change entry with the actor and writes it.
 */
export interface Actor {
  uuid: string | null
  admin: boolean
  record(change: Omit<ChangeEntry, 'actor' | 'actorEmail'>): void
}

export function actorFor(audit: AuditLog, log: AuditLogger, who: { uuid: string; email: string } | null, admin: boolean): Actor {
  return {
    uuid: who?.uuid ?? null,
    admin,
    record: (change) => audit.change({ ...change, actor: who?.uuid ?? 'operator', actorEmail: who?.email ?? null }, log),
  }
}
