import type { FastifyInstance } from 'fastify'
import { STATUS_CODES } from 'node:http'
import { AppError } from '../../core/errors/app-error.ts'
import { installErrorHandling } from '../../core/errors/error-handler.ts'

/**
 * DSpace's error body (Spring Boot's): `{timestamp, status, error, message, path}`, never a
 * stack trace; 5xx messages are already made generic by the core normaliser.
 */
export function installDspaceErrors(app: FastifyInstance, clockNow: () => Date): void {
  installErrorHandling(app, (error, request) => ({
    timestamp: clockNow().toISOString(),
    status: error.status,
    error: STATUS_CODES[error.status] ?? 'Error',
    message: error.message,
    path: request.url.split('?')[0],
  }))
}

// The messages are DSpace's own, so clients that match on them keep working.
export const authnErrors = {
  authenticationFailed: (wwwAuthenticate: string) =>
    new AppError('authentication_failed', 'Authentication failed!', { status: 401, headers: { 'www-authenticate': wwwAuthenticate } }),
  signOnFailed: (cause?: unknown) => new AppError('authentication_failed', 'Authentication failed!', { status: 401, cause }),
  authenticationRequired: (wwwAuthenticate?: string) =>
    new AppError('unauthorized', 'Authentication is required', {
      status: 401,
      headers: wwwAuthenticate ? { 'www-authenticate': wwwAuthenticate } : undefined,
    }),
  accessDenied: (message = 'Access is denied') => new AppError('forbidden', message, { status: 403 }),
  invalidCsrf: () => new AppError('invalid_csrf_token', 'Access is denied. Invalid CSRF token.', { status: 403 }),
  invalidCors: () => new AppError('invalid_cors_request', 'Invalid CORS request', { status: 403 }),
  badRequest: (message: string) => new AppError('bad_request', message, { status: 400 }),
  formBodyRequired: () => new AppError('unsupported_media_type', 'Credentials must be sent as application/x-www-form-urlencoded', { status: 415 }),
  unprocessable: (message: string) => new AppError('unprocessable', message, { status: 422 }),
  notFound: (message: string) => new AppError('not_found', message, { status: 404 }),
  methodNotAllowed: (message: string, allow: string) => new AppError('method_not_allowed', message, { status: 405, headers: { allow } }),
  tooManyAttempts: (retryAfterSeconds: number) =>
    new AppError('rate_limited', 'Too many failed login attempts; try again later', {
      status: 429,
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
}
