import type { FastifyInstance } from 'fastify'
import type { ErrorBodyFormatter } from '../../core/errors/normalize.ts'
import { STATUS_CODES } from 'node:http'
import { AppError } from '../../core/errors/app-error.ts'
import { CORE_ERROR_STATUS } from '../../core/errors/codes.ts'
import { installErrorHandling } from '../../core/errors/error-handler.ts'

/**
 * DSpace's error body (Spring Boot's): `{timestamp, status, error, message, path}`, never a
 * stack trace; 5xx messages are already made generic by the core normaliser.
 */
export function dspaceErrorBody(clockNow: () => Date): ErrorBodyFormatter {
  return (error, request) => ({
    timestamp: clockNow().toISOString(),
    status: error.status,
    error: STATUS_CODES[error.status] ?? 'Error',
    message: error.message,
    path: request.url.split('?')[0],
  })
}

export function installDspaceErrors(app: FastifyInstance, clockNow: () => Date): void {
  installErrorHandling(app, dspaceErrorBody(clockNow))
}

/**
 * authn's codes beside the core's, each with its one HTTP status: a call site names the code,
 * never the status.
 */
const AUTHN_ERROR_STATUS = {
  ...CORE_ERROR_STATUS,
  authentication_failed: 401,
  invalid_csrf_token: 403,
  invalid_cors_request: 403,
  unprocessable: 422,
  email_taken: 422,
  invalid_email: 422,
  weak_password: 422,
} as const

export type AuthnErrorCode = keyof typeof AUTHN_ERROR_STATUS

export function authnError(code: AuthnErrorCode, message: string, extra: { headers?: Record<string, string>; cause?: unknown } = {}): AppError {
  return new AppError(code, message, { status: AUTHN_ERROR_STATUS[code], ...extra })
}

// The messages are DSpace's own, so clients that match on them keep working.
export const authnErrors = {
  authenticationFailed: (wwwAuthenticate: string) =>
    authnError('authentication_failed', 'Authentication failed!', { headers: { 'www-authenticate': wwwAuthenticate } }),
  signOnFailed: (cause?: unknown) => authnError('authentication_failed', 'Authentication failed!', { cause }),
  authenticationRequired: (wwwAuthenticate?: string) =>
    authnError('unauthorized', 'Authentication is required', { headers: wwwAuthenticate ? { 'www-authenticate': wwwAuthenticate } : undefined }),
  accessDenied: (message = 'Access is denied') => authnError('forbidden', message),
  invalidCsrf: () => authnError('invalid_csrf_token', 'Access is denied. Invalid CSRF token.'),
  invalidCors: () => authnError('invalid_cors_request', 'Invalid CORS request'),
  badRequest: (message: string) => authnError('bad_request', message),
  formBodyRequired: () => authnError('unsupported_media_type', 'Credentials must be sent as application/x-www-form-urlencoded'),
  unprocessable: (message: string) => authnError('unprocessable', message),
  notFound: (message: string) => authnError('not_found', message),
  methodNotAllowed: (message: string, allow: string) => authnError('method_not_allowed', message, { headers: { allow } }),
  /** A personal access token that is unknown, revoked or expired: a 401 saying which (issue 19). */
  invalidPersonalToken: (message: string) => authnError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }),
  /** A federated provider's metadata (its keys, its sign-on URL) cannot be read, and no earlier copy is at hand. */
  providerUnavailable: (cause: unknown) =>
    authnError('service_unavailable', 'The identity provider cannot be reached right now; try again', { headers: { 'retry-after': '30' }, cause }),
  tooManyAttempts: (retryAfterSeconds: number) =>
    authnError('rate_limited', 'Too many failed login attempts; try again later', { headers: { 'retry-after': String(retryAfterSeconds) } }),
}
