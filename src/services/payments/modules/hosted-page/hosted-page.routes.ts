import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { normalizeError } from '../../../../core/errors/normalize.ts'
import type { PaymentsContext } from '../../context.ts'
import { pickLocale } from './hosted-page.i18n.ts'
import { createHostedPageService } from './hosted-page.service.ts'
import { renderErrorPage, renderPaymentPage } from './hosted-page.view.ts'

const PUBLIC_DIR = join(import.meta.dirname, '../../public')
const Text = Type.Optional(Type.String({ maxLength: 4096 }))
const LinkQuerySchema = Type.Object(
  {
    key: Text,
    test: Text,
    currency: Text,
    value: Text,
    reference: Text,
    text: Text,
    redirect: Text,
    locale: Text,
    recurring: Text,
  },
  { additionalProperties: true },
)

/**
 * The page may load its own script, styles and frames, and post to the 3-D Secure frames
 * (the same origin, or PAYMENTS_PUBLIC_URL's); it talks to the client API only.
 */
function securityHeaders(reply: FastifyReply, publicUrl: string | undefined) {
  const extra = publicUrl ? ` ${new URL(publicUrl).origin}` : ''
  return reply
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'${extra}; frame-src 'self'${extra}; form-action 'self'${extra}; base-uri 'none'; frame-ancestors 'none'`,
    )
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
}

/**
 * The hosted payment page, `GET /pos` (the spec's `{pos_url}`), and its static script and
 * styles under `/pos/assets/`. Plain HTML, CSS and one small script; no CDN.
 */
export function hostedPageRoutes(ctx: PaymentsContext): FastifyPluginAsync {
  const service = createHostedPageService(ctx)
  return async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>()
    // Whatever goes wrong on the page itself is an HTML page too, never a JSON body or a stack.
    app.setErrorHandler((error, request, reply) => {
      // Normalized, as the API's errors are: a refusal raised as an AppError (a NUL in the query) has a status, not a statusCode.
      const { status } = normalizeError(error)
      if (status >= 500) request.log.error({ err: error }, 'hosted page failed')
      const locale = pickLocale(undefined, request.headers['accept-language'])
      return securityHeaders(reply, ctx.config.publicUrl)
        .code(status >= 500 ? 500 : 400)
        .type('text/html; charset=utf-8')
        .send(renderErrorPage(locale, 'errorLink'))
    })

    // Every route of the page (the static files too) is public: customers have no API key.
    app.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object | undefined), public: true } as typeof route.config
    })
    await app.register(fastifyStatic, {
      root: PUBLIC_DIR,
      prefix: '/pos/assets/',
      decorateReply: false,
      index: false,
      maxAge: '10m',
      schemaHide: true,
    })

    app.get(
      '/pos',
      {
        schema: {
          tags: ['payments'],
          summary: 'The hosted payment page of a payment link (HTML)',
          querystring: LinkQuerySchema,
          response: { 200: Type.String({ description: 'HTML' }), 400: Type.String({ description: 'HTML' }), 404: Type.String({ description: 'HTML' }) },
        },
      },
      async (request, reply) => {
        const query = request.query
        const locale = pickLocale(query.locale, request.headers['accept-language'])
        const result = await service.resolve(query)
        securityHeaders(reply, ctx.config.publicUrl).type('text/html; charset=utf-8')
        if (!result.ok) return reply.code(result.status).send(renderErrorPage(locale, result.message))
        return reply.send(renderPaymentPage(result.link, locale))
      },
    )
  }
}
