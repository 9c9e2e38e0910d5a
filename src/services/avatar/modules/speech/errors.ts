import type { FastifyInstance } from 'fastify'
import { installErrorHandling } from '../../../../core/errors/error-handler.ts'
import { formatAvatarError } from '../../errors.ts'

/**
 * The avatar `{detail}` body for the speech routes, except that a provider's 502 (synthesis
 * or recognition failed) and 503 (recognition not configured) keep their message: it is
 * ours, safe, and tells the operator what to fix — unlike an unexpected 500's.
 */
export function installSpeechErrorHandling(app: FastifyInstance): void {
  installErrorHandling(app, (error) => (error.status === 502 || error.status === 503 ? { detail: error.message } : formatAvatarError(error)), {
    notFound: false,
  })
}
