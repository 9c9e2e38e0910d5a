import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { safeEqual } from '../../../../core/security/secret-token.ts'
import type { PaymentsContext } from '../../context.ts'
import type { ClientPaymentsService } from '../client-payments/client-payments.service.ts'
import type { VaultService } from '../vault/vault.service.ts'
import { challengePage, framePageError, hintsPage, silentPage } from './tds.pages.ts'
import { openFrameData, signHint } from './tds.signing.ts'

const TAGS = ['payments']
const Html = Type.String({ description: 'an HTML page for a frame' })
const FRAME_CONFIG = { public: true }

const MethodBody = Type.Object({ threeDSMethodData: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true })
const ChallengeBody = Type.Object({ creq: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true })
const CompleteBody = Type.Object(
  { creq: Type.Optional(Type.String({ maxLength: 4096 })), code: Type.Optional(Type.String({ maxLength: 32 })), decision: Type.Optional(Type.String({ maxLength: 16 })) },
  { additionalProperties: true },
)

function html(reply: FastifyReply, body: string, status = 200) {
  // Frames of the customer's checkout: never cached, never indexed.
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body)
}

/**
 * The simulated issuer's frames (test mode): the fingerprint ("3DS method") page, which posts
 * its proof back at once (or never, for `test.tds.fingerprint = timeout`), and the challenge
 * page with a one-time code and approve / reject. Everything they need travels in the signed
 * form fields the challenge responses handed out; no state is kept.
 */
export function tdsFrameRoutes(payments: ClientPaymentsService, vault: VaultService, ctx: PaymentsContext): FastifyPluginAsync {
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    const maxAge = ctx.config.vaultTokenTtlMs
    const expired = 'This 3-D Secure session is invalid or has expired. Close this window and try the payment again.'

    app.post(
      '/payments/tds/fingerprint',
      { config: FRAME_CONFIG, schema: { tags: TAGS, summary: '3-D Secure fingerprint frame (test mode)', body: MethodBody, response: { 200: Html, 400: Html } } },
      async (request, reply) => {
        const sealer = await vault.sealer()
        const now = ctx.clock.now()
        const data = openFrameData(sealer, 'tds-method', request.body.threeDSMethodData ?? '', now, maxAge)
        if (!data) return html(reply, framePageError(expired), 400)
        if (data.mode === 'timeout') return html(reply, silentPage())
        return html(reply, hintsPage('3-D Secure', 'Device data collected.', [signHint(sealer, 'tds-fp-done', data.p, now)], data.o))
      },
    )

    app.post(
      '/payments/tds/challenge',
      { config: FRAME_CONFIG, schema: { tags: TAGS, summary: '3-D Secure challenge frame (test mode)', body: ChallengeBody, response: { 200: Html, 400: Html } } },
      async (request, reply) => {
        const creq = request.body.creq ?? ''
        const data = openFrameData(await vault.sealer(), 'tds-creq', creq, ctx.clock.now(), maxAge)
        if (!data) return html(reply, framePageError(expired), 400)
        return html(reply, challengePage({ creq, code: await payments.challengeCode(creq), amount: data.amount, merchant: data.merchant, card: data.mode }))
      },
    )

    app.post(
      '/payments/tds/challenge/complete',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure challenge answer (test mode)', body: CompleteBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) => {
        const sealer = await vault.sealer()
        const now = ctx.clock.now()
        const creq = request.body.creq ?? ''
        const data = openFrameData(sealer, 'tds-creq', creq, now, maxAge)
        if (!data) return html(reply, framePageError(expired), 400)
        if (request.body.decision === 'reject') {
          return html(reply, hintsPage('3-D Secure', 'Payment not confirmed.', [signHint(sealer, 'tds-challenge-rejected', data.p, now)], data.o))
        }
        const expected = await payments.challengeCode(creq)
        if (!safeEqual((request.body.code ?? '').trim(), expected)) {
          const view = { creq, code: expected, amount: data.amount, merchant: data.merchant, card: data.mode }
          return html(reply, challengePage({ ...view, error: 'That code is not correct. Type the six digits shown above.' }))
        }
        return html(reply, hintsPage('3-D Secure', 'Payment confirmed.', [signHint(sealer, 'tds-challenge-approved', data.p, now)], data.o))
      },
    )
  }
}
