import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { randomUUID } from 'node:crypto'
import { safeEqual } from '../../../../core/security/secret-token.ts'
import { apiPrefix } from '../../context.ts'
import { authnErrors } from '../../errors.ts'
import { bearerToken } from '../auth-context/index.ts'
import { isPersonalToken } from '../personal-tokens/index.ts'

/** The names dspace-angular uses (src/app/core/xsrf): only the cookie's prefix is configurable. */
const CSRF_RESPONSE_HEADER = 'DSPACE-XSRF-TOKEN'
const CSRF_REQUEST_HEADER = 'x-xsrf-token'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

function csrfCookieName(prefix: string): string {
  return `${prefix}-XSRF-COOKIE`
}

/** Marks the response to carry a fresh token (login, refresh, logout, GET /security/csrf). */
export function rotateCsrf(request: FastifyRequest): void {
  request.csrfState.rotate = true
}

/**
 * DSpace's double-submit protocol. The token is a random UUID sent in the `DSPACE-XSRF-TOKEN`
 * response header and in an HttpOnly cookie; a state-changing request must echo it in
 * `X-XSRF-TOKEN`, equal to the cookie (compared in constant time). Unlike DSpace, a response
 * carries at most one Set-Cookie for it, and the token is accepted only in the header.
 */
export function installCsrf(scope: FastifyInstance, options: { cookiePrefix: string }): void {
  const cookieName = csrfCookieName(options.cookiePrefix)

  // Callback-style hooks: they run on every request, and need no promise.
  scope.addHook('onRequest', function checkCsrfToken(request, _reply, done) {
    const cookie = request.cookies[cookieName]
    request.csrfState = { rotate: !cookie }
    if (SAFE_METHODS.has(request.method)) return done()
    // A script's personal access token travels in a header no browser adds by itself (and CORS
    // has already refused foreign origins): there is no cross-site request to forge.
    const bearer = bearerToken(request)
    if (bearer !== undefined && isPersonalToken(bearer)) return done()
    const header = request.headers[CSRF_REQUEST_HEADER]
    if (!cookie || typeof header !== 'string' || !safeEqual(header, cookie)) {
      request.csrfState.rotate = true
      return done(authnErrors.invalidCsrf())
    }
    done()
  })

  scope.addHook('onSend', function rotateCsrfToken(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    if (!request.csrfState?.rotate) return done(null, payload)
    const token = randomUUID()
    const secure = request.protocol === 'https'
    const prefix = apiPrefix(request)
    reply.header(CSRF_RESPONSE_HEADER, token)
    reply.setCookie(cookieName, token, {
      path: prefix === '/server/api' ? '/server' : '/',
      httpOnly: true,
      secure,
      sameSite: secure ? 'none' : 'lax',
    })
    done(null, payload)
  })
}
