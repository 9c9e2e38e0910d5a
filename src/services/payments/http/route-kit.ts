import { Type } from '@sinclair/typebox'
import { pageQuerySchema } from '../../../core/http/pagination.ts'
import { errorResponses, fieldError } from './errors.ts'

/** `limit` required (1 to 1000), `before`/`after` cursors; other keys (filter[test], sort) are tolerated. */
export const PageQuery = pageQuerySchema({ required: true, max: 1000 })

/** The error statuses a route can answer, with the given success responses. */
export function responses<T extends Record<number, unknown>>(success: T) {
  return { ...success, ...errorResponses }
}

export const EmptyBody = Type.Unknown({ description: 'no body', 'x-raw': true })

export const TAGS = ['payments']

/** A `filter[name]` query value, whether the query parser kept the brackets in the key or nested them. */
export function filterValue(query: unknown, name: string): string | undefined {
  const record = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>
  const nested = (typeof record.filter === 'object' && record.filter !== null ? record.filter : {}) as Record<string, unknown>
  const value = record[`filter[${name}]`] ?? nested[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

const TRUE = new Set(['y', 'yes', 'true', '1'])
const FALSE = new Set(['n', 'no', 'false', '0'])

/** A boolean `filter[name]`: `y`/`n` (the Node client), `1`/`0` (PHP), `yes`/`no`, `true`/`false`. */
export function booleanFilter(query: unknown, name: string): boolean | undefined {
  const value = filterValue(query, name)
  if (value === undefined) return undefined
  const word = value.toLowerCase()
  if (TRUE.has(word)) return true
  if (FALSE.has(word)) return false
  throw fieldError(`filter[${name}]`, 'must be y or n')
}
