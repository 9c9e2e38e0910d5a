import { Type } from '@sinclair/typebox'
import { AppError } from '../../core/errors/app-error.ts'
import { CORE_ERROR_STATUS } from '../../core/errors/codes.ts'
import type { NormalizedError, ValidationProblem } from '../../core/errors/normalize.ts'

/** The avatar API's only error body. */
export const ErrorSchema = Type.Object({ detail: Type.String({ description: 'what went wrong, for a person to read' }) }, { description: 'An error' })

/** The avatar's error codes, each with its one HTTP status: the core's and its own. */
const AVATAR_ERROR_STATUS = {
  ...CORE_ERROR_STATUS,
  session_not_found: 404,
  synthesis_not_found: 404,
  /** The synthesis exists but its provider reported no phoneme timing (the online voices). */
  visemes_unavailable: 409,
  /** The operator routes are off: no AVATAR_OPERATOR_KEY is configured (as if they did not exist). */
  operator_disabled: 404,
  upgrade_required: 426,
  /** nginx's "client closed request": logged, never sent, as nobody is there to read it. */
  client_closed_request: 499,
  synthesis_failed: 502,
  recognition_failed: 502,
} as const

type AvatarErrorCode = keyof typeof AVATAR_ERROR_STATUS

export function avatarError(code: AvatarErrorCode, message: string, extra: { headers?: Record<string, string>; cause?: unknown } = {}): AppError {
  return new AppError(code, message, { status: AVATAR_ERROR_STATUS[code], ...extra })
}

export const INTERNAL_ERROR_DETAIL = 'Internal server error. Fallback mode activated.'

function describeProblem(problem: ValidationProblem): string {
  if (problem.message === 'is missing') return `missing required field ${problem.field}`
  if (!problem.field) return problem.location === 'body' ? `request body ${problem.message}` : `${problem.location} ${problem.message}`
  return `${problem.field} ${problem.message}`
}

/**
 * `{detail}` for every error: validation problems read as sentences naming the field, and no
 * 500 ever shows its cause.
 */
export function formatAvatarError(error: NormalizedError): { detail: string } {
  if (error.status >= 500 && error.internal) return { detail: INTERNAL_ERROR_DETAIL }
  if (error.validation && error.validation.length > 0) return { detail: error.validation.map(describeProblem).join('; ') }
  return { detail: error.message }
}
