import { booleanFilter, filterValue } from '../../http/route-kit.ts'
import { fieldError } from '../../http/errors.ts'
import { TRANSACTION_STATUSES, type TransactionFilter, type TransactionStatus } from './transactions.repository.ts'

const DAY = /^\d{4}-\d{2}-\d{2}$/
const DAY_MS = 86_400_000
/** The longest volume period: a year and a day, so a leap year fits. */
const MAX_VOLUME_DAYS = 366

/** `2026-11-25` → that day's first instant (UTC), or undefined when it is no real date. */
function dayStart(value: string): Date | undefined {
  if (!DAY.test(value)) return undefined
  const date = new Date(`${value}T00:00:00.000Z`)
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? undefined : date
}

/** A day or an ISO 8601 time: the instant it starts at, and the instant after it (exclusive end). */
function instantRange(field: string, value: string): { start: Date; end: Date } {
  const day = dayStart(value)
  if (day) return { start: day, end: new Date(day.getTime() + DAY_MS) }
  const time = /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(value) ? new Date(value) : undefined
  if (!time || Number.isNaN(time.getTime())) throw fieldError(field, 'must be a date (YYYY-MM-DD, UTC) or an ISO 8601 time with a zone')
  return { start: time, end: new Date(time.getTime() + 1) }
}

function amountFilter(query: unknown, name: string): number | undefined {
  const value = filterValue(query, name)
  if (value === undefined) return undefined
  if (!/^\d{1,15}$/.test(value)) throw fieldError(`filter[${name}]`, 'must be a whole number of minor units (995 is 9.95)')
  return Number(value)
}

/** The filters of `GET /merchants/{id}/transactions`, checked: a bad one is a 400 naming it. */
export function transactionFilterOf(query: unknown): TransactionFilter {
  const filter: TransactionFilter = { successful: booleanFilter(query, 'successful'), recurring: booleanFilter(query, 'recurring') }
  const status = filterValue(query, 'status')
  if (status !== undefined) {
    if (!(TRANSACTION_STATUSES as readonly string[]).includes(status)) throw fieldError('filter[status]', `must be one of ${TRANSACTION_STATUSES.join(', ')}`)
    filter.status = status as TransactionStatus
  }
  const currency = filterValue(query, 'currency')
  if (currency !== undefined) {
    if (!/^[A-Z]{3}$/.test(currency)) throw fieldError('filter[currency]', 'must be a three-letter ISO 4217 currency code')
    filter.currency = currency
  }
  filter.amountMin = amountFilter(query, 'amountMin')
  filter.amountMax = amountFilter(query, 'amountMax')
  if (filter.amountMin !== undefined && filter.amountMax !== undefined && filter.amountMin > filter.amountMax)
    throw fieldError('filter[amountMax]', 'must not be less than filter[amountMin]')
  const from = filterValue(query, 'createdFrom')
  const to = filterValue(query, 'createdTo')
  if (from !== undefined) filter.createdFrom = instantRange('filter[createdFrom]', from).start.toISOString()
  if (to !== undefined) filter.createdBefore = instantRange('filter[createdTo]', to).end.toISOString()
  if (filter.createdFrom !== undefined && filter.createdBefore !== undefined && filter.createdFrom >= filter.createdBefore)
    throw fieldError('filter[createdTo]', 'must not be before filter[createdFrom]')
  const last4 = filterValue(query, 'last4')
  if (last4 !== undefined) {
    if (!/^\d{4}$/.test(last4)) throw fieldError('filter[last4]', 'must be the last 4 digits of the card')
    filter.last4 = last4
  }
  const search = filterValue(query, 'search')?.trim()
  if (search !== undefined && search !== '') {
    if (search.length > 100) throw fieldError('filter[search]', 'must be at most 100 characters')
    filter.search = search
  }
  return filter
}

/** A volume period: whole UTC days, `from` to `to` inclusive. */
export interface VolumePeriod {
  from: string
  to: string
  today: string
}

/** `from` and `to` of `GET /merchants/{id}/volume`: by default the 30 days up to today (UTC). */
export function volumePeriodOf(query: { from?: string; to?: string }, now: Date): VolumePeriod {
  const today = now.toISOString().slice(0, 10)
  const to = query.to === undefined ? dayStart(today) : dayStart(query.to)
  if (!to) throw fieldError('to', 'must be a date (YYYY-MM-DD)')
  const from = query.from === undefined ? new Date(to.getTime() - 29 * DAY_MS) : dayStart(query.from)
  if (!from) throw fieldError('from', 'must be a date (YYYY-MM-DD)')
  if (from > to) throw fieldError('from', 'must not be after to')
  if ((to.getTime() - from.getTime()) / DAY_MS + 1 > MAX_VOLUME_DAYS) throw fieldError('from', `the period is at most ${MAX_VOLUME_DAYS} days`)
  return { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10), today }
}
