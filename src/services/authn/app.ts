import type { FastifyInstance } from 'fastify'
import { STATUS_CODES } from 'node:http'
import { installErrorHandling } from '../../core/errors/error-handler.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import type { AuthnConfig } from './config.ts'
import { migrations } from './migrations/index.ts'

/** DSpace's error body: `{timestamp, status, error, message, path}`. */
function installDspaceErrors(app: FastifyInstance, clockNow: () => Date): void {
  installErrorHandling(app, (error, request) => ({
    timestamp: clockNow().toISOString(),
    status: error.status,
    error: STATUS_CODES[error.status] ?? 'Error',
    message: error.message,
    path: request.url.split('?')[0],
  }))
}

export const authnService: ServiceDefinition<AuthnConfig> = {
  name: 'authn',
  migrations,
  plugin: (deps) => async (app) => {
    // DSpace serves the same API at /api and, behind its usual proxy layout, /server/api.
    for (const prefix of ['/api', '/server/api']) {
      await app.register(
        async (scope) => {
          installDspaceErrors(scope, () => deps.clock.now())
        },
        { prefix },
      )
    }
  },
}
