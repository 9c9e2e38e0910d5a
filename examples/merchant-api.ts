// The merchant API through Triad's typed client (clients/typescript): creates an app (its key is
// shown once), a test merchant, a webhook endpoint for it, then lists the merchant's events. Every
// path, body and answer is checked by the compiler against the OpenAPI document. Run it with
//   TRIAD_URL=http://127.0.0.1:8080 WEBHOOK_URL=https://shop.example/webhooks node examples/merchant-api.ts
// (the webhook URL must be https unless PAYMENTS_WEBHOOK_ALLOW_HTTP=true; docs/typed-client.md).
import { createTriadClient } from '../clients/typescript/index.ts'

/** Fails with the server's own error body when a call did not succeed. */
function expect<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(`${what}: HTTP ${result.response.status} ${JSON.stringify(result.error)}`)
  return result.data
}

export async function merchantApiTour(baseUrl: string, webhookUrl: string) {
  const anonymous = createTriadClient({ baseUrl })
  const { app } = expect(await anonymous.POST('/apps', { body: { name: 'Example shop' } }), 'POST /apps')
  // Paylike's scheme: HTTP Basic with an empty user name and the app key as the password.
  const api = createTriadClient({ baseUrl, headers: { authorization: `Basic ${Buffer.from(`:${app.key}`).toString('base64')}` } })
  const { merchant } = expect(
    await api.POST('/merchants', {
      body: { name: 'Example shop', currency: 'EUR', email: 'shop@example.com', website: 'https://shop.example', descriptor: 'EXAMPLE SHOP', company: { country: 'DK' }, test: true },
    }),
    'POST /merchants',
  )
  const path = { merchantId: merchant.id }
  const { webhook } = expect(await api.POST('/merchants/{merchantId}/webhooks', { params: { path }, body: { url: webhookUrl, events: ['transaction.captured', 'transaction.refunded'] } }), 'POST /merchants/{merchantId}/webhooks')
  const events = expect(await api.GET('/merchants/{merchantId}/events', { params: { path, query: { limit: 10 } } }), 'GET /merchants/{merchantId}/events')
  return { appId: app.id, merchantId: merchant.id, webhook: { id: webhook.id, url: webhook.url, events: webhook.events, secret: webhook.secret }, events: events.length }
}

if (import.meta.main) {
  const result = await merchantApiTour(process.env.TRIAD_URL ?? 'http://127.0.0.1:8080', process.env.WEBHOOK_URL ?? 'https://shop.example/webhooks')
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
}
