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

/** Where acting-on-behalf is recorded. The default writes to the request log; tests pass a fake. */
export interface AuditLog {
  loginAs(entry: LoginAsEntry, request: FastifyRequest): void
}

/** One info line per request, tagged `audit: "login-as"`, with the request id: greppable and shipped with the logs. */
export const requestLogAudit: AuditLog = {
  loginAs(entry, request) {
    request.log.info({ audit: 'login-as', ...entry }, 'request made on behalf of another eperson')
  },
}
