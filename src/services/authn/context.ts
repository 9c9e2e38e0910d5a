import type { FastifyRequest } from 'fastify'

interface CsrfState {
  /** Set when the response must carry a fresh CSRF token (header and cookie). */
  rotate: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    csrfState: CsrfState
  }
}

/** The API root a request came through: DSpace's `/server/api`, or `/api`. */
export function apiPrefix(request: FastifyRequest): '/api' | '/server/api' {
  return request.url.startsWith('/server/api') ? '/server/api' : '/api'
}

/** Absolute URL of the API root, as HAL links carry it. */
export function apiBase(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}${apiPrefix(request)}`
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
