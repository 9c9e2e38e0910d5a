import { Type } from '@sinclair/typebox'
import type { NormalizedError, ValidationProblem } from '../../core/errors/normalize.ts'

/** The avatar API's only error body. */
export const ErrorSchema = Type.Object({ detail: Type.String({ description: 'what went wrong, for a person to read' }) }, { description: 'An error' })

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
