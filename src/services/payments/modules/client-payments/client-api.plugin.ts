import type { FastifyPluginAsync } from 'fastify'
import type { PaymentsContext } from '../../context.ts'
import { tdsFrameRoutes } from '../tds/index.ts'
import { vaultRoutes, type VaultService } from '../vault/index.ts'
import { clientErrors } from '../../http/client-errors.ts'
import { installClientWire } from '../../http/client-wire.ts'
import { clientPaymentsRoutes } from './client-payments.routes.ts'
import { createClientPaymentsService } from './client-payments.service.ts'

/**
 * The customer side's client API in its own scope: the vault, `/payments` with its
 * challenges, and the 3-D Secure frames, with Paylike's client wire rules (client.http.ts).
 */
export function clientApiPlugin(ctx: PaymentsContext, vault: VaultService): FastifyPluginAsync {
  return async (scope) => {
    installClientWire(scope)
    // JSON parse errors quote the body, and a body here can hold a card number: answer (and
    // log) a fixed message instead.
    const parseJson = scope.getDefaultJsonParser('error', 'error')
    scope.removeContentTypeParser(['application/json', 'application/vnd.api+json'])
    scope.addContentTypeParser(['application/json', 'application/vnd.api+json'], { parseAs: 'string' }, (request, body, done) => {
      const text = String(body)
      if (text.trim() === '') return done(clientErrors.bodyInvalid('the body is empty; send a JSON object'), undefined)
      parseJson(request, text, (error, value) => {
        if (error) done(clientErrors.bodyInvalid('the body is not valid JSON'), undefined)
        else done(null, value)
      })
    })
    const payments = createClientPaymentsService(ctx, vault)
    await scope.register(vaultRoutes(vault))
    await scope.register(clientPaymentsRoutes(payments, ctx.config))
    await scope.register(tdsFrameRoutes(vault, ctx))
  }
}
