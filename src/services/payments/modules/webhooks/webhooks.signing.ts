import { createHmac } from 'node:crypto'

/**
 * The `Triad-Signature` header of a delivery, as Stripe's: `t=<unix seconds>,v1=<hex>`, where
 * the hex is HMAC-SHA256 under the endpoint's secret of `<t>.<body>`. The timestamp is signed
 * with the body, so a receiver can refuse a replayed request once it is older than its
 * tolerance (docs/payments-webhooks.md has the check).
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}

/**
 * The body of a delivery: `{id, type, created, data}`, with `data` the stored JSON as it is,
 * so every attempt of an event sends the same bytes.
 */
export function eventBody(event: { id: string; type: string; created: string; data: string }): string {
  return `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"created":${JSON.stringify(event.created)},"data":${event.data}}`
}
