import type { OpenCorsOptions } from '../../core/http/open-cors.ts'

/**
 * Cross-origin use of the avatar API. It takes no cookies, so any origin may call it by
 * default (AVATAR_CORS_ORIGINS), without credentials. A preflight allows every method the
 * avatar's routes use and the headers its clients send: the body's type, and the API key
 * or bearer token the rate limit counts by.
 */
export function avatarCors(origins: readonly string[]): OpenCorsOptions {
  return {
    origins,
    methods: ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: [
      'Accept',
      'Accept-Language',
      'Authorization',
      'Cache-Control',
      'Content-Type',
      'Last-Event-ID',
      'X-API-Key',
      'X-Request-Id',
      'X-Requested-With',
    ],
    exposeHeaders: [
      'Retry-After',
      'X-Avatar-Persona',
      'X-Avatar-Persona-Unknown',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
      'X-Synthesis-Id',
      'X-TTS-Provider',
    ],
    maxAgeSeconds: 86_400,
  }
}
