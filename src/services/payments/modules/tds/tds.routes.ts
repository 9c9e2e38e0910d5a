import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { safeEqual } from '../../../../core/security/secret-token.ts'
import type { PaymentsContext } from '../../context.ts'
import type { ClientPaymentsService } from '../client-payments/client-payments.service.ts'
import type { VaultService } from '../vault/vault.service.ts'
import { pickLocale } from '../hosted-page/hosted-page.i18n.ts'
import { challengePage, framePageError, hintsPage, silentPage, TDS_TEXT } from './tds.pages.ts'
import { openFrameData, signHint } from './tds.signing.ts'

const TAGS = ['payments']
const Html = Type.String({ description: 'an HTML page for a frame' })
const FRAME_CONFIG = { public: true }

const MethodBody = Type.Object({ threeDSMethodData: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true })
const ChallengeBody = Type.Object({ creq: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true })
const CompleteBody = Type.Object(
  {
    creq: Type.Optional(Type.String({ maxLength: 4096 })),
    code: Type.Optional(Type.String({ maxLength: 32 })),
    decision: Type.Optional(Type.String({ maxLength: 16 })),
  },
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

    app.post(
      '/payments/tds/fingerprint',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure fingerprint frame (test mode)', body: MethodBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) => {
        const locale = pickLocale(undefined, request.headers['accept-language'])
        const sealer = await vault.sealer()
        const now = ctx.clock.now()
        const data = openFrameData(sealer, 'tds-method', request.body.threeDSMethodData ?? '', now, maxAge)
        if (!data) return html(reply, framePageError(locale), 400)
        if (data.mode === 'timeout') return html(reply, silentPage(locale))
        return html(reply, hintsPage(locale, TDS_TEXT[locale].collected, [signHint(sealer, 'tds-fp-done', data.p, now)], data.o))
      },
    )

    app.post(
      '/payments/tds/challenge',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure challenge frame (test mode)', body: ChallengeBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) => {
        const locale = pickLocale(undefined, request.headers['accept-language'])
        const creq = request.body.creq ?? ''
        const data = openFrameData(await vault.sealer(), 'tds-creq', creq, ctx.clock.now(), maxAge)
        if (!data) return html(reply, framePageError(locale), 400)
        return html(reply, challengePage(locale, { creq, code: await payments.challengeCode(creq), amount: data.amount, merchant: data.merchant, card: data.mode }))
      },
    )

    app.post(
      '/payments/tds/challenge/complete',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure challenge answer (test mode)', body: CompleteBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) => {
        const locale = pickLocale(undefined, request.headers['accept-language'])
        const t = TDS_TEXT[locale]
        const sealer = await vault.sealer()
        const now = ctx.clock.now()
        const creq = request.body.creq ?? ''
        const data = openFrameData(sealer, 'tds-creq', creq, now, maxAge)
        if (!data) return html(reply, framePageError(locale), 400)
        if (request.body.decision === 'reject') {
          return html(reply, hintsPage(locale, t.notConfirmed, [signHint(sealer, 'tds-challenge-rejected', data.p, now)], data.o))
        }
        const expected = await payments.challengeCode(creq)
        if (!safeEqual((request.body.code ?? '').trim(), expected)) {
          const view = { creq, code: expected, amount: data.amount, merchant: data.merchant, card: data.mode }
          return html(reply, challengePage(locale, { ...view, error: t.wrongCode }))
        }
        return html(reply, hintsPage(locale, t.confirmed, [signHint(sealer, 'tds-challenge-approved', data.p, now)], data.o))
      },
    )
  }
}
