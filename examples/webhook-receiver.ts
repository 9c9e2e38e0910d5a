// A Triad webhook receiver in plain Node (no dependencies): it verifies `Triad-Signature`,
// refuses replays older than five minutes, answers 2xx at once, and ignores an event id it has
// already handled (deliveries are at-least-once). Run it with
//   WEBHOOK_SECRET=whsec_… PORT=4242 node examples/webhook-receiver.ts
// and register http://127.0.0.1:4242/webhooks for a test merchant (docs/payments-webhooks.md).
// Deliveries also follow Standard Webhooks: a receiver with a Standard Webhooks library
// (`standardwebhooks`, svix's `Webhook`) verifies them with the same secret and no code of this.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'

/** How old a signed timestamp may be (and how far ahead of our clock), in seconds. */
const TOLERANCE_SECONDS = 300

export type Verdict = { ok: true } | { ok: false; reason: string }

/**
 * Checks a delivery: `header` is the `Triad-Signature` value (`t=<unix>,v1=<hex>`), `body` the
 * raw request body exactly as received (parse the JSON only after this passes).
 */
export function verifySignature(
  header: string | undefined,
  body: string,
  secret: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): Verdict {
  if (!header) return { ok: false, reason: 'no Triad-Signature header' }
  const parts = new Map<string, string[]>()
  for (const item of header.split(',')) {
    const at = item.indexOf('=')
    if (at > 0) parts.set(item.slice(0, at).trim(), [...(parts.get(item.slice(0, at).trim()) ?? []), item.slice(at + 1).trim()])
  }
  const timestamp = Number(parts.get('t')?.[0])
  const signatures = parts.get('v1') ?? []
  if (!Number.isSafeInteger(timestamp) || signatures.length === 0) return { ok: false, reason: 'malformed Triad-Signature header' }
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest()
  // Several v1 values may come while a secret is being replaced: any one that matches will do.
  const matches = signatures.some((hex) => {
    const given = Buffer.from(hex, 'hex')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!matches) return { ok: false, reason: 'signature does not match' }
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000)
  const tolerance = options.toleranceSeconds ?? TOLERANCE_SECONDS
  // Checked after the signature, so the timestamp compared is the one Triad signed.
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: 'timestamp outside the tolerance (a replay?)' }
  return { ok: true }
}

if (import.meta.main) {
  const secret = process.env.WEBHOOK_SECRET ?? ''
  if (!secret.startsWith('whsec_')) throw new Error('set WEBHOOK_SECRET to the secret shown when the endpoint was registered')
  // In production keep handled ids in your database, with the work the event caused.
  const handled = new Set<string>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const verdict = verifySignature(request.headers['triad-signature'] as string | undefined, body, secret)
      if (!verdict.ok) {
        response.writeHead(400).end(verdict.reason)
        return
      }
      const event = JSON.parse(body) as { id: string; type: string; data: { id?: string } }
      if (!handled.has(event.id)) {
        handled.add(event.id)
        console.log(`${event.type} ${event.data.id ?? ''} (event ${event.id})`)
      }
      response.writeHead(204).end()
    })
  })
  server.listen(Number(process.env.PORT ?? 4242), '127.0.0.1')
}
