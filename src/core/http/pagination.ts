import { Type } from '@sinclair/typebox'
import type { SelectQueryBuilder } from 'kysely'
import { identifierSchema } from './identifiers.ts'

export interface PageRequest {
  limit: number
  before?: string
  after?: string
}

/**
 * Query-string schema of a cursor-paginated list. With `required`, a missing `limit` is a
 * validation error (as in the payments API); otherwise it defaults to `defaultLimit`.
 */
export function pageQuerySchema(options: { required: boolean; max: number; defaultLimit?: number }) {
  const limit = Type.Integer({ minimum: 1, maximum: options.max, description: `page size, 1 to ${options.max}` })
  const cursor = (description: string) => Type.Optional(identifierSchema({ description }))
  return Type.Object({
    limit: options.required ? limit : Type.Optional(Type.Integer({ ...limit, default: options.defaultLimit ?? 50 })),
    before: cursor('only items older than this id (newest first)'),
    after: cursor('only items newer than this id; alone, the order is oldest first'),
  })
}

/**
 * Applies a cursor page to a query over a column whose values sort by creation time
 * (time-ordered ids). Newest first; `before` and `after` are open bounds; `after` without
 * `before` lists oldest first, so a client walks forward from a known item.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the column belongs to whichever table the caller selects from.
export function applyPage<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, column: any, page: PageRequest) {
  let paged = query
  if (page.before !== undefined) paged = paged.where(column, '<', page.before)
  if (page.after !== undefined) paged = paged.where(column, '>', page.after)
  const ascending = page.after !== undefined && page.before === undefined
  return paged.orderBy(column, ascending ? 'asc' : 'desc').limit(page.limit)
}
