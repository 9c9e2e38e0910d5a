import { isAppError } from './app-error.ts'
import type { FastifyRequest } from 'fastify'
import { databaseFaultOf } from '../db/errors.ts'
import { MAX_IDENTIFIER_LENGTH } from '../http/identifiers.ts'
import { CORE_ERROR_STATUS, type CoreErrorCode } from './codes.ts'

export interface ValidationProblem {
  /** Where the bad value was: body, querystring, params or headers. */
  location: string
  /** The field's path in dotted form (`company.country`), empty for the whole location. */
  field: string
  message: string
}

/** Turns a normalized error into a service's own error body. */
export type ErrorBodyFormatter = (error: NormalizedError, request: FastifyRequest) => unknown

/** Any error, reduced to what a service needs to write its own error body. */
export interface NormalizedError {
  status: number
  code: string
  /** Safe to send: internals of 5xx errors never reach it. */
  message: string
  details?: unknown
  validation?: ValidationProblem[]
  headers?: Record<string, string>
  /** True when the error is ours to fix (5xx): log it with its stack. */
  internal: boolean
}

interface FastifyLikeError {
  statusCode?: number
  code?: string
  message?: string
  validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown>; keyword?: string }>
  validationContext?: string
}

/**
 * The errors Fastify raises itself (routing, body parsing), reworded: their own messages echo
 * the whole URL or speak of Fastify's internals. A bad URL is a validation problem of the path.
 */
const FASTIFY_ERRORS: Record<string, { code: CoreErrorCode; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', message: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'Unsupported Media Type: this route does not take a body of that content type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'bad_request', message: 'Content-Length does not match the length of the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'bad_request', message: 'Request body is empty; expected a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'bad_request', message: 'Malformed JSON in request body' },
  FST_ERR_CTP_INVALID_TYPE: { code: 'bad_request', message: 'The Content-Type header is malformed' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'uri_too_long', message: `A path segment is longer than the ${MAX_IDENTIFIER_LENGTH} characters any identifier may have` },
}

/** Seconds a client is asked to wait before retrying a request the database could not serve. */
const DATABASE_RETRY_AFTER_S = 2

/**
 * What a database failure answers. A 503 promises that nothing was applied, so a proxy or a
 * client may send the request again anywhere; only a connection lost during COMMIT cannot keep
 * that promise, and answers 504 instead (docs/decisions.md, "Database faults at runtime").
 */
const DATABASE_FAULTS = {
  unavailable: {
    status: CORE_ERROR_STATUS.service_unavailable,
    code: 'service_unavailable',
    message: 'The database is unavailable or too slow right now; the request was not applied. Retry later.',
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_S) },
  },
  full: {
    status: CORE_ERROR_STATUS.insufficient_storage,
    code: 'insufficient_storage',
    message: "The server's storage is full; the request was not applied.",
    headers: undefined,
  },
  outcome_unknown: {
    status: CORE_ERROR_STATUS.outcome_unknown,
    code: 'outcome_unknown',
    message: 'The database connection was lost while the request was being committed: it may or may not have been applied. Check before sending it again.',
    headers: undefined,
  },
} as const

const BAD_URL: ValidationProblem = { location: 'path', field: '', message: 'is not a validly percent-encoded URL' }

function statusToCode(status: number): CoreErrorCode {
  const found = Object.entries(CORE_ERROR_STATUS).find(([, value]) => value === status)
  return (found?.[0] as CoreErrorCode | undefined) ?? (status >= 500 ? 'internal_error' : 'bad_request')
}

function toValidationProblems(error: FastifyLikeError): ValidationProblem[] {
  const location = error.validationContext ?? 'body'
  return (error.validation ?? []).map((item) => {
    const segments = (item.instancePath ?? '').split('/').filter(Boolean)
    const missing = item.params?.missingProperty
    if (typeof missing === 'string') segments.push(missing)
    const additional = item.params?.additionalProperty
    if (typeof additional === 'string') segments.push(additional)
    const field = segments.join('.')
    const message = item.keyword === 'additionalProperties' ? 'is not allowed' : (item.message ?? 'is invalid')
    return { location, field, message }
  })
}

function describeValidation(problems: ValidationProblem[]): string {
  return problems.map((problem) => (problem.field ? `${problem.field} ${problem.message}` : `${problem.location} ${problem.message}`)).join('; ')
}

export function normalizeError(error: unknown): NormalizedError {
  if (isAppError(error)) {
    // A 503 is a stated unavailability (not configured, not ready), not a fault of ours: its
    // message is meant for the client, and it is no reason to log a stack.
    const internal = error.status >= 500 && error.status !== 503
    return {
      status: error.status,
      code: error.code,
      message: error.message,
      details: error.details,
      headers: error.headers,
      internal,
    }
  }
  const fault = databaseFaultOf(error)
  if (fault) {
    const { status, code, message, headers } = DATABASE_FAULTS[fault]
    return { status, code, message, ...(headers ? { headers: { ...headers } } : {}), internal: false }
  }
  const fastifyError = (typeof error === 'object' && error !== null ? error : {}) as FastifyLikeError
  if (fastifyError.validation) {
    const validation = toValidationProblems(fastifyError)
    return { status: CORE_ERROR_STATUS.validation_failed, code: 'validation_failed', message: describeValidation(validation), validation, internal: false }
  }
  if (fastifyError.code === 'FST_ERR_BAD_URL') {
    return { status: CORE_ERROR_STATUS.validation_failed, code: 'validation_failed', message: describeValidation([BAD_URL]), validation: [BAD_URL], internal: false }
  }
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined
  if (known) return { status: CORE_ERROR_STATUS[known.code], code: known.code, message: known.message, internal: false }
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, code: statusToCode(status), message: fastifyError.message ?? 'Bad request', internal: false }
  }
  return { status: CORE_ERROR_STATUS.internal_error, code: 'internal_error', message: 'Internal server error', internal: true }
}
