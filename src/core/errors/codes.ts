import { AppError } from './app-error.ts'

/** Codes every service shares, each with its one HTTP status. Services add their own. */
export const CORE_ERROR_STATUS = {
  validation_failed: 400,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  /** The database lost its connection during COMMIT: the request may or may not have been applied. */
  outcome_unknown: 504,
  insufficient_storage: 507,
} as const

export type CoreErrorCode = keyof typeof CORE_ERROR_STATUS

export function coreError(
  code: CoreErrorCode,
  message: string,
  extra: { details?: unknown; headers?: Record<string, string>; cause?: unknown } = {},
): AppError {
  return new AppError(code, message, { status: CORE_ERROR_STATUS[code], ...extra })
}
