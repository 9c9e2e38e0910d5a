import { Type } from '@sinclair/typebox'
import { pageQuerySchema } from '../../../core/http/pagination.ts'
import { errorResponses } from './errors.ts'

/** `limit` required (1 to 1000), `before`/`after` cursors; other keys (filter[test], sort) are tolerated. */
export const PageQuery = pageQuerySchema({ required: true, max: 1000 })

/** The error statuses a route can answer, with the given success responses. */
export function responses<T extends Record<number, unknown>>(success: T) {
  return { ...success, ...errorResponses }
}

export const EmptyBody = Type.Unknown({ description: 'no body', 'x-raw': true })

export const TAGS = ['payments']
