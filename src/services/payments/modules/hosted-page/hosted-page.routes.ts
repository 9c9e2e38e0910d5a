import type { FastifyPluginAsync } from 'fastify'
import type { PaymentsContext } from '../../context.ts'

/** The hosted payment page `GET /pos` (step 3). */
export function hostedPageRoutes(_ctx: PaymentsContext): FastifyPluginAsync {
  return async () => {}
}
