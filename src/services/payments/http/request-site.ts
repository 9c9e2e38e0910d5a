import type { FastifyRequest } from 'fastify'
import type { PaymentsConfig } from '../config.ts'

/** Where the request came from, for the frames' URLs and their postMessage target. */
export interface RequestSite {
  /** The public base URL of this service (PAYMENTS_PUBLIC_URL, or the request's own). */
  baseUrl: string
  /** The Origin header of the page running the payment, when it sent a sane one. */
  origin: string | undefined
  /** The Accept-Language header of the request, which the challenge frame speaks. */
  language: string | undefined
}

/** The public base URL for frame actions, and the payment page's origin for postMessage. */
export function requestSite(request: FastifyRequest, config: Pick<PaymentsConfig, 'publicUrl'>): RequestSite {
  const origin = request.headers.origin
  return {
    baseUrl: config.publicUrl ?? `${request.protocol}://${request.host}`,
    origin: typeof origin === 'string' && /^https?:\/\/[^/\s]+$/.test(origin) ? origin : undefined,
    language: request.headers['accept-language'],
  }
}
