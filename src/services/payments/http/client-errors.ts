import { type Static, Type } from '@sinclair/typebox'
import { AppError } from '../../../core/errors/app-error.ts'
import type { NormalizedError } from '../../../core/errors/normalize.ts'

/**
 * The status codes of Paylike's client-side APIs (the vault and `/payments`), with the
 * messages of paylike/api-reference `status-codes.md`. The body is `{code, message}` plus
 * the code's extras (`path` for token errors); the status is 400 except where noted.
 */
export const clientErrors = {
  endpointNotFound: () => clientError('ENDPOINT_NOT_FOUND', 'The endpoint was not found. Check the domain, path, method and querystring of the request.'),
  versionMissing: () => clientError('VERSION_MISSING', 'No API version was found in the request header (send Accept-Version: 1)'),
  versionUnsupported: (version: string) =>
    clientError('VERSION_UNSUPPORTED', `API version ${JSON.stringify(version.slice(0, 20))} is not supported (supported: 1)`),
  bodyInvalid: (message: string) => clientError('BODY_INVALID', `Invalid request body: ${message}`),
  requestInvalid: (message: string) => clientError('REQUEST_INVALID', `Invalid request: ${message}`),
  tokenInvalid: (path: string) => clientError('TOKEN_INVALID', `The token for \`${path}\` is invalid`, { path }),
  tokenTypeUnexpected: (path: string) => clientError('TOKEN_TYPE_UNEXPECTED', `The token for \`${path}\` is not of the right type`, { path }),
  testModeMixed: (message: string) => clientError('TEST_MODE_MIXED', `Mismatch of test modes: ${message}`),
  integrationKeyUnknown: () => clientError('PAYMENT_INTEGRATION_KEY_UNKNOWN', 'The payment integration key is unknown'),
  integrationDisabled: () =>
    clientError('PAYMENT_INTEGRATION_DISABLED', 'Live payments are disabled until the card vault key is supplied from outside Triad (PAYMENTS_VAULT_KEY, or TRIAD_SECRETS_FILE)'),
  challengeUnavailable: () => clientError('PAYMENT_CHALLENGE_UNAVAILABLE', 'The requested payment challenge is not available'),
  cardNumberInvalid: () => clientError('PAYMENT_CARD_NUMBER_INVALID', 'Invalid payment card number.'),
  schemeUnknown: () => clientError('PAYMENT_CARD_SCHEME_UNKNOWN', 'The payment card was not recognized. Try with any Visa or Mastercard.'),
  schemeUnsupported: (scheme: string | undefined) =>
    clientError('PAYMENT_CARD_SCHEME_UNSUPPORTED', `${scheme ?? 'This type of card'} is not supported. Try with any Visa or Mastercard.`),
  securityCodeInvalid: () => clientError('PAYMENT_CARD_SECURITY_CODE_INVALID', 'Incorrect payment card security code'),
  cardExpired: () => clientError('PAYMENT_CARD_EXPIRED', 'The payment card has expired'),
  cardDisabled: () => clientError('PAYMENT_CARD_DISABLED', 'Payment card disabled for this use'),
  cardLost: () => clientError('PAYMENT_CARD_LOST', 'Payment card has been marked as lost'),
  amountLimit: () => clientError('PAYMENT_AMOUNT_LIMIT', 'The payment is above the amount limit of the payment card'),
  insufficientFunds: () => clientError('PAYMENT_INSUFFICIENT_FUNDS', 'Insufficient funds on payment method'),
  rejectedByIssuer: () => clientError('PAYMENT_REJECTED_BY_ISSUER', 'The payment was rejected'),
  rejected: () => clientError('PAYMENT_REJECTED', 'The payment was rejected'),
  methodError: (message = 'Unexpected payment method error') => clientError('PAYMENT_METHOD_ERROR', message),
  tdsRequired: () => clientError('TDSECURE_REQUIRED', '3-D Secure is required but is not supported by the payment method at the moment.'),
  /**
   * The issuer's failure keeps Paylike's message; a cardholder who pressed Reject, or who typed
   * a wrong one-time code three times, is told what happened instead of "retry later".
   */
  tdsFailed: (reason: 'issuer' | 'rejected' | 'failed') =>
    clientError(
      'TDSECURE_FAILED',
      reason === 'rejected'
        ? '3-D Secure failed: the cardholder rejected the payment.'
        : reason === 'failed'
          ? '3-D Secure failed: the one-time code was entered wrongly too many times.'
          : '3-D Secure is required but failed. Please retry later.',
    ),
}


/** The one client code that is not a 400 (paylike/api-reference status-codes.md). */
const CLIENT_ERROR_STATUS: Record<string, number> = { ENDPOINT_NOT_FOUND: 404 }

function clientError(code: string, message: string, extra?: Record<string, unknown>): AppError {
  return new AppError(code, message, { status: CLIENT_ERROR_STATUS[code] ?? 400, details: extra })
}

const CORE_TO_CLIENT: Record<string, string> = {
  not_found: 'ENDPOINT_NOT_FOUND',
  // Paylike's list has no code for 429 (its clients read the status and Retry-After); a code
  // that says what happened beats REQUEST_INVALID, which tells the client its request was wrong.
  rate_limited: 'RATE_LIMITED',
  payload_too_large: 'BODY_INVALID',
  unsupported_media_type: 'BODY_INVALID',
  bad_request: 'BODY_INVALID',
  internal_error: 'INTERNAL_ERROR',
  // Not in Paylike's list either: the status (and Retry-After) is what a client acts on.
  service_unavailable: 'SERVICE_UNAVAILABLE',
  insufficient_storage: 'INSUFFICIENT_STORAGE',
  outcome_unknown: 'OUTCOME_UNKNOWN',
}

/** The body of every client API error: `{code, message, ...extras}` (a newline is added on the wire). */
export function formatClientError(error: NormalizedError): ClientErrorBody {
  if (error.validation) {
    return { code: 'REQUEST_INVALID', message: `Invalid request: ${error.message}` }
  }
  const details = error.details && typeof error.details === 'object' && !Array.isArray(error.details) ? (error.details as Record<string, unknown>) : {}
  if (/^[A-Z_]+$/.test(error.code)) return { ...details, code: error.code, message: error.message }
  const code = CORE_TO_CLIENT[error.code] ?? (error.status >= 500 ? 'INTERNAL_ERROR' : 'REQUEST_INVALID')
  const message = code === 'BODY_INVALID' ? `Invalid request body: ${error.message}` : error.message
  return { code, message }
}

export const ClientErrorSchema = Type.Object(
  { code: Type.String(), message: Type.String(), path: Type.Optional(Type.String()) },
  { additionalProperties: true, description: 'A client API status code (paylike/api-reference status-codes.md) and its message' },
)
export type ClientErrorBody = Static<typeof ClientErrorSchema>
