import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { PaymentsContext } from '../../context.ts'
import { requestSite } from '../../http/request-site.ts'
import type { VaultService } from '../vault/index.ts'
import { challengePage, framePageError, hintsPage, silentPage, TDS_TEXT } from './tds.pages.ts'
import { createTdsFramesService, type FrameOutcome } from './tds.service.ts'

const TAGS = ['payments']
const Html = Type.String({ description: 'an HTML page for a frame' })
const FRAME_CONFIG = { public: true }

const MethodBody = Type.Object({ threeDSMethodData: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true })
const ChallengeBody = Type.Object({ creq: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true })
const CompleteBody = Type.Object(
  {
    creq: Type.Optional(Type.String({ maxLength: 4096 })),
    tries: Type.Optional(Type.String({ maxLength: 256 })),
    code: Type.Optional(Type.String({ maxLength: 32 })),
    decision: Type.Optional(Type.String({ maxLength: 16 })),
  },
  { additionalProperties: true },
)

function html(reply: FastifyReply, body: string, status = 200) {
  // Frames of the customer's checkout: never cached, never indexed.
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body)
}

/** The page of a frame outcome; the challenge form posts its answer to an absolute URL. */
function render(reply: FastifyReply, outcome: FrameOutcome, answerUrl: string) {
  const t = TDS_TEXT[outcome.locale]
  switch (outcome.kind) {
    case 'invalid':
      return html(reply, framePageError(outcome.locale), 400)
    case 'silent':
      return html(reply, silentPage(outcome.locale))
    case 'hints':
      return html(reply, hintsPage(outcome.locale, t[outcome.message], outcome.hints, outcome.origin))
    case 'challenge':
      return html(
        reply,
        challengePage(outcome.locale, {
          action: answerUrl,
          creq: outcome.creq,
          tries: outcome.tries,
          code: outcome.code,
          amount: outcome.data.amount,
          merchant: outcome.data.merchant,
          card: outcome.data.mode,
          left: outcome.left,
        }),
      )
  }
}

/**
 * The simulated issuer's frames (test mode): the fingerprint ("3DS method") page, which posts
 * its proof back at once (or never, for `test.tds.fingerprint = timeout`), and the challenge
 * page with a one-time code and approve / reject. Everything they need travels in the signed
 * form fields the challenge responses handed out; no state is kept (tds.service.ts).
 */
export function tdsFrameRoutes(vault: VaultService, ctx: PaymentsContext): FastifyPluginAsync {
  const frames = createTdsFramesService(ctx, vault)
  return async (scope) => {
    // The frames' forms are flat (the fields a challenge handed out), so they are read with
    // URLSearchParams rather than the server's bracket-nesting parser (qs), which cost a tenth of
    // the fingerprint frame's request. A repeated field still becomes a list, which the schema
    // refuses, as before.
    scope.removeContentTypeParser('application/x-www-form-urlencoded')
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, function parseFrameForm(_request, body, done) {
      // A Map, then own properties: a field named __proto__ stays a field.
      const fields = new Map<string, string | string[]>()
      for (const [name, value] of new URLSearchParams(String(body))) {
        const before = fields.get(name)
        fields.set(name, before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value])
      }
      done(null, Object.fromEntries(fields))
    })
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    const answerUrl = (request: Parameters<typeof requestSite>[0]) => `${requestSite(request, ctx.config).baseUrl}/payments/tds/challenge/complete`

    app.post(
      '/payments/tds/fingerprint',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure fingerprint frame (test mode)', body: MethodBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) =>
        render(reply, await frames.fingerprint(request.body.threeDSMethodData ?? '', request.headers['accept-language']), answerUrl(request)),
    )

    app.post(
      '/payments/tds/challenge',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure challenge frame (test mode)', body: ChallengeBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) => render(reply, await frames.challenge(request.body.creq ?? '', request.headers['accept-language']), answerUrl(request)),
    )

    app.post(
      '/payments/tds/challenge/complete',
      {
        config: FRAME_CONFIG,
        schema: { tags: TAGS, summary: '3-D Secure challenge answer (test mode)', body: CompleteBody, response: { 200: Html, 400: Html } },
      },
      async (request, reply) => {
        const { creq = '', tries = '', code = '', decision } = request.body
        return render(reply, await frames.answer({ creq, tries, code, decision }, request.headers['accept-language']), answerUrl(request))
      },
    )
  }
}
