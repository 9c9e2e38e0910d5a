import { type Static, Type } from '@sinclair/typebox'
import { AppError } from '../../../core/errors/app-error.ts'
import { coreError } from '../../../core/errors/codes.ts'
import type { NormalizedError } from '../../../core/errors/normalize.ts'

/**
 * Paylike's error bodies: a validation failure is a JSON array of `{field, message}` naming
 * every bad field; a processing error (a declined card) is one object from
 * paylike/processing-errors; anything else (401, 403, 404, 409, 429) is `{code, message}`.
 */
/** The payments service's own codes, each with its one HTTP status (core's codes are in core/errors/codes.ts). */
const PAYMENTS_ERROR_STATUS = {
  validation_failed: 400,
  processing_error: 400,
} as const

type PaymentsErrorCode = keyof typeof PAYMENTS_ERROR_STATUS

function paymentsError(code: PaymentsErrorCode, message: string, details: unknown): AppError {
  return new AppError(code, message, { status: PAYMENTS_ERROR_STATUS[code], details })
}

export interface FieldProblem {
  field: string
  message: string
}

/** A 400 whose body is the array of field problems, for rules a JSON schema cannot state. */
export function fieldErrors(problems: FieldProblem[]): AppError {
  return paymentsError(
    'validation_failed',
    problems.map((problem) => `${problem.field} ${problem.message}`).join('; '),
    problems,
  )
}

export function fieldError(field: string, message: string): AppError {
  return fieldErrors([{ field, message }])
}

export const notFound = (what: string) => coreError('not_found', `${what} not found`)
export const forbidden = (message = 'This app has no access to the resource') => coreError('forbidden', message)
export const conflict = (message: string) => coreError('conflict', message)

/** The codes of paylike/processing-errors, with its texts and who is at fault. */
const PROCESSING_ERRORS = {
  1: { text: 'Invalid currency', client: true, merchant: true },
  2: { text: 'Invalid card details', client: true, merchant: false },
  3: { text: 'Invalid card number', client: true, merchant: false },
  4: { text: 'Invalid security code (CSC)', client: true, merchant: false },
  5: { text: 'Invalid expire date', client: true, merchant: false },
  6: { text: 'Card expired', client: true, merchant: false },
  7: { text: 'Insufficient funds', client: true, merchant: false },
  8: { text: 'Declined by cardholder bank', client: true, merchant: false },
  9: { text: 'Card restricted', client: true, merchant: false },
  10: { text: 'Card rejected', client: true, merchant: false },
  11: { text: 'Transaction rejected', client: true, merchant: true },
  12: { text: 'Error, please try again or contact us', client: true, merchant: true },
  13: { text: 'Invalid descriptor', client: false, merchant: true },
  14: { text: 'Invalid amount', client: true, merchant: true },
  15: { text: 'Missing amount', client: true, merchant: true },
  16: { text: 'Missing currency', client: true, merchant: true },
  17: { text: 'Missing card number', client: true, merchant: false },
  18: { text: 'Missing card expiry month', client: true, merchant: false },
  19: { text: 'Missing card expiry year', client: true, merchant: false },
  20: { text: 'Missing card security code (CSC)', client: true, merchant: false },
  21: { text: 'Missing secure connection (https)', client: false, merchant: true },
  22: { text: 'Amount is bigger than allowed, please contact us', client: false, merchant: true },
  25: { text: 'Card amount limit exceeded', client: true, merchant: false },
  26: { text: 'Invalid merchant public key, please contact us', client: false, merchant: true },
  27: { text: 'The merchant is not allowed to create transactions', client: false, merchant: true },
  28: { text: 'The merchant is not allowed to save cards', client: false, merchant: true },
  29: { text: 'Invalid card number or card not supported', client: true, merchant: false },
  30: { text: '3-D Secure is required', client: true, merchant: false },
  31: { text: '3-D Secure failed', client: true, merchant: false },
} as const

export type ProcessingErrorCode = keyof typeof PROCESSING_ERRORS

export const ProcessingErrorSchema = Type.Object(
  {
    code: Type.Integer(),
    text: Type.String(),
    message: Type.String(),
    client: Type.Boolean(),
    merchant: Type.Boolean(),
  },
  { description: 'A processing error (paylike/processing-errors): `text` and `message` carry the same words.' },
)
export type ProcessingErrorBody = Static<typeof ProcessingErrorSchema>

export function processingErrorBody(code: ProcessingErrorCode): ProcessingErrorBody {
  const { text, client, merchant } = PROCESSING_ERRORS[code]
  return { code, text, message: text, client, merchant }
}

/** A 400 whose body is one processing error object. */
export function processingError(code: ProcessingErrorCode, body: ProcessingErrorBody = processingErrorBody(code)): AppError {
  return paymentsError('processing_error', body.text, body)
}

// Ajv's wording is precise but generic; where Paylike has its own words, use them.
const FRIENDLY: Record<string, string> = {
  descriptor: 'Invalid descriptor (see https://github.com/paylike/descriptor)',
  currency: 'must be a three-letter ISO 4217 currency code',
  'company.country': 'must be an ISO 3166-1 alpha-2 country code',
  email: 'must be an e-mail address',
  website: 'must be a website address',
  'bank.iban': 'is not a valid IBAN (country, length or checksum)',
}

function fieldMessage(field: string, message: string): string {
  if (message.startsWith('must have required property')) return 'is required'
  return FRIENDLY[field] ?? message
}

/** The body of every payments error (see the top of this file). */
export function formatPaymentsError(error: NormalizedError): unknown {
  if (error.validation) {
    const seen = new Set<string>()
    const problems: FieldProblem[] = []
    for (const problem of error.validation) {
      const field = problem.field || problem.location
      // anyOf/oneOf failures repeat one field several times; the first message is enough.
      if (seen.has(field)) continue
      seen.add(field)
      problems.push({ field, message: fieldMessage(field, problem.message) })
    }
    return problems
  }
  if (error.code === 'validation_failed' && Array.isArray(error.details)) return error.details
  if (error.code === 'processing_error' && error.details) return error.details
  if (error.status === 400 && error.code === 'bad_request') return [{ field: 'body', message: error.message }]
  return { code: error.code, message: error.message }
}

/** Response schemas of the error statuses, spread into every route's `response`. */
const RawBody = (description: string) => Type.Unknown({ description, 'x-raw': true })
export const errorResponses = {
  400: RawBody('Validation: an array of {field, message}; processing: one {code, text, message, client, merchant}'),
  401: RawBody('{code, message}: no or unknown API key'),
  403: RawBody('{code, message}: the app has no access to this merchant'),
  404: RawBody('{code, message}: no such resource'),
  409: RawBody('{code, message}: a concurrent change, or an idempotency key reused with another body'),
  429: RawBody('{code, message}: rate limited; see Retry-After'),
}
