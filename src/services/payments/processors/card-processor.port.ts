import type { ProcessingErrorCode } from '../http/errors.ts'

/** A card as the merchant API keeps it: display data plus an opaque reference to the stored credential. */
export interface ProcessorCard {
  /** The vault's reference to the stored card number (null when none was kept). */
  ref: string | null
  bin: string | null
  last4: string | null
  /** Last millisecond of the expiry month, ISO 8601. */
  expiry: string | null
  scheme: string | null
}

export interface AuthorizeRequest {
  merchant: { id: string; test: boolean; descriptor: string }
  card: ProcessorCard
  amount: number
  currency: string
  descriptor: string
  /** A merchant-initiated charge on a stored card (no cardholder present, no security code). */
  recurring: boolean
}

export type AuthorizeResult = { approved: true } | { approved: false; code: ProcessingErrorCode; message?: string }

/**
 * The card acquirer. The merchant API calls it outside any database transaction (it may be a
 * network call); a real acquirer is one more implementation of this port.
 */
export interface CardProcessor {
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult>
}
