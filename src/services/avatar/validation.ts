import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import type { FastifyRouteSchemaDef, FastifyValidationResult } from 'fastify/types/schema.js'
import { firstUnacceptableValue } from '../../core/http/validation.ts'

function describe(error: ValueError): string {
  const schema = error.schema as { maxLength?: number; minLength?: number; minimum?: number; maximum?: number; description?: string; anyOf?: Array<{ const?: unknown }> }
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is missing'
    case ValueErrorType.String:
      return 'must be a string'
    case ValueErrorType.Object:
      return 'must be a JSON object'
    case ValueErrorType.Integer:
      return 'must be an integer'
    case ValueErrorType.Number:
      return 'must be a number'
    case ValueErrorType.Boolean:
      return 'must be true or false'
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`
    case ValueErrorType.Union: {
      // A choice among fixed values (an emotion, a voice): name them.
      const values = schema.anyOf?.map((option) => option.const)
      if (values?.every((value) => typeof value === 'string')) return `must be one of ${values.join(', ')}`
      return error.message.charAt(0).toLowerCase() + error.message.slice(1)
    }
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not an accepted field'
    case ValueErrorType.StringPattern:
      return schema.description ? `must be ${schema.description}` : 'has an invalid format'
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1)
  }
}

export interface StrictValidationProblem {
  instancePath: string
  keyword: string
  message: string
  params: Record<string, never>
}

/**
 * A TypeBox check whose errors come out in the shape Fastify puts on `error.validation`, one
 * per field, worded for the `{detail}` body; then the rules core adds to every validator
 * (finite numbers, well-formed text without NUL).
 */
export function compileStrictValidator<T extends TSchema>(schema: T): (data: unknown) => { value: Static<T> } | { error: StrictValidationProblem[] } {
  const check = TypeCompiler.Compile(schema)
  return (data: unknown) => {
    if (check.Check(data)) {
      const problem = firstUnacceptableValue(data)
      if (problem === undefined) return { value: data }
      return { error: [{ instancePath: problem.path, keyword: 'acceptable', message: problem.message, params: {} }] }
    }
    const seen = new Set<string>()
    const errors: StrictValidationProblem[] = []
    for (const error of check.Errors(data)) {
      if (seen.has(error.path)) continue
      seen.add(error.path)
      errors.push({ instancePath: error.path, keyword: String(error.type), message: describe(error), params: {} })
      // When the body itself has the wrong type, its missing fields are noise.
      if (error.path === '') break
    }
    return { error: errors }
  }
}

/**
 * Validates request bodies with TypeBox's compiler instead of Fastify's Ajv, which is set up
 * to coerce types (right for query strings, wrong for JSON: `{"userText": 123}` must be
 * refused, not read as "123").
 */
export function strictBodyCompiler<T>({ schema }: FastifyRouteSchemaDef<T>): FastifyValidationResult {
  const validate = compileStrictValidator(schema as TSchema)
  return (data: unknown) => {
    const result = validate(data)
    return 'error' in result ? { error: result.error as never } : result
  }
}
