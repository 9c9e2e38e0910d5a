import type { Actor } from '../../actor.ts'
import { createHmac } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'

/**
 * The `Triad-Signature` header of a delivery, as Stripe's: `t=<unix seconds>,v1=<hex>`, where
 * the hex is HMAC-SHA256 under the endpoint's secret (the whole `whsec_…` string) of
 * `<t>.<body>`. The timestamp is signed with the body, so a receiver can refuse a replayed
 * request once it is older than its tolerance (docs/payments-webhooks.md has the check).
 * During a secret rotation each secret adds its own `v1=` (the newest first).
 */
function triadSignatureHeader(secrets: readonly string[], body: string, unixSeconds: number): string {
  const macs = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`)
  return [`t=${unixSeconds}`, ...macs].join(',')
}

/**
 * The HMAC key Standard Webhooks derives from a secret: the bytes its `whsec_<base64>` form
 * encodes. Secrets issued before Standard Webhooks were `whsec_<base64url>`; Node's base64
 * decoder reads both alphabets, so both forms give the same bytes.
 */
function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
}

/**
 * The `webhook-signature` header of Standard Webhooks (standardwebhooks.com): `v1,<base64>`,
 * HMAC-SHA256 under the secret's key of `<id>.<timestamp>.<body>`; several signatures are
 * separated by spaces, the newest secret's first.
 */
function standardSignatureHeader(secrets: readonly string[], messageId: string, body: string, unixSeconds: number): string {
  return secrets
    .map((secret) => `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(`${messageId}.${unixSeconds}.${body}`).digest('base64')}`)
    .join(' ')
}

/**
 * The signing headers of one delivery attempt: Standard Webhooks' three and Triad's own two,
 * all from the same secrets (the current one first, then one being rotated out, if any).
 */
export function signedHeaders(delivery: { eventId: string; body: string; unixSeconds: number; secrets: readonly string[] }): Record<string, string> {
  const { eventId, body, unixSeconds, secrets } = delivery
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': standardSignatureHeader(secrets, eventId, body, unixSeconds),
    'triad-event-id': eventId,
    'triad-signature': triadSignatureHeader(secrets, body, unixSeconds),
  }
}

/**
 * The body of a delivery: `{id, type, created, data, actor?}`, with `data` the stored JSON as
 * it is, so every attempt of an event sends the same bytes.
 */
export function eventBody(event: { id: string; type: string; created: string; data: string; actor: Actor | undefined }): string {
  const actor = event.actor ? `,"actor":${JSON.stringify(event.actor)}` : ''
  return `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"created":${JSON.stringify(event.created)},"data":${event.data}${actor}}`
}
