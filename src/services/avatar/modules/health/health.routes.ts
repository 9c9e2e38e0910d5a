import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorSchema } from '../../errors.ts'
import { HealthSchema } from './health.schemas.ts'
import type { HealthService } from './health.service.ts'

/** GET /health, beside the core's /healthz and /readyz: no rate limit, no database. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ service: HealthService }> = async (app, { service }) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['avatar'],
        summary: 'The avatar service and the state of its providers',
        description:
          'What the meta-human front end probes on load, every 30 s and on reconnect (`{VITE_API_BASE_URL}/health`). ' +
          'Always 200 while the process answers; `/readyz` is the probe for load balancers.',
        response: { 200: HealthSchema, 500: ErrorSchema },
      },
    },
    async () => service.report(),
  )
}
