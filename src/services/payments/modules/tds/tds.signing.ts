import type { Sealer } from '../vault/index.ts'

/**
 * Proofs of the 3-D Secure steps. Paylike's challenge loop is stateless on the server: the
 * client carries its proofs as `hints` and sends the whole payment again. So a hint must be
 * unforgeable and bound to one payment: it is `<kind>.<issued, base 36>.<HMAC>` where the HMAC
 * (a key derived from the vault key) covers the kind, the time and the payment's fingerprint
 * (a hash of the request without its hints). A hint copied to another payment, edited, or
 * older than the token lifetime proves nothing and is ignored.
 */
const HINT_KINDS = ['tds-fp-start', 'tds-fp-done', 'tds-challenge-approved', 'tds-challenge-rejected', 'tds-challenge-failed'] as const
export type HintKind = (typeof HINT_KINDS)[number]

export function signHint(sealer: Sealer, kind: HintKind, fingerprint: string, now: Date): string {
  const issued = now.getTime().toString(36)
  return `${kind}.${issued}.${sealer.mac('hint', `${kind}.${issued}.${fingerprint}`)}`
}

/** The kinds proven by `hints` for this payment. */
export function verifyHints(sealer: Sealer, hints: readonly string[], fingerprint: string, now: Date, maxAgeMs: number): Set<HintKind> {
  const proven = new Set<HintKind>()
  for (const hint of hints) {
    const [kind, issued, mac, extra] = hint.split('.')
    if (extra !== undefined || !kind || !issued || !mac || !(HINT_KINDS as readonly string[]).includes(kind)) continue
    const age = now.getTime() - Number.parseInt(issued, 36)
    if (!(age >= -60_000 && age <= maxAgeMs)) continue
    if (sealer.macMatches('hint', `${kind}.${issued}.${fingerprint}`, mac)) proven.add(kind as HintKind)
  }
  return proven
}

/** Data handed to a 3-D Secure frame through the form fields, signed so the frame can trust it. */
export interface FrameData {
  /** The payment fingerprint. */
  p: string
  /** The origin of the page that runs the payment (postMessage target), or '*'. */
  o: string
  /** Issued, ms since the epoch. */
  t: number
  /** What the frame should do or show. */
  mode?: string
  /** The amount in minor units, its currency and exponent (the frame formats it in its language). */
  amount?: { minor: number; currency: string; exponent: number }
  merchant?: string
  /** The language of the page that runs the payment, when it said one (Accept-Language). */
  lang?: string
}

export function signFrameData(sealer: Sealer, purpose: string, data: FrameData): string {
  const payload = Buffer.from(JSON.stringify(data)).toString('base64url')
  return `${payload}.${sealer.mac(purpose, payload)}`
}

export function openFrameData(sealer: Sealer, purpose: string, value: string, now: Date, maxAgeMs: number): FrameData | undefined {
  const [payload, mac, extra] = value.split('.')
  if (extra !== undefined || !payload || !mac || !sealer.macMatches(purpose, payload, mac)) return undefined
  try {
    const data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as FrameData
    const age = now.getTime() - data.t
    return typeof data.p === 'string' && typeof data.o === 'string' && age >= -60_000 && age <= maxAgeMs ? data : undefined
  } catch {
    return undefined
  }
}

/** The one-time code of a challenge: six digits derived from the signed request, so no state is kept. */
export function challengeCode(sealer: Sealer, creq: string): string {
  const mac = Buffer.from(sealer.mac('otp', creq), 'base64url')
  return String(mac.readUInt32BE(0) % 1_000_000).padStart(6, '0')
}

/**
 * The count of wrong one-time codes of a challenge, carried by the challenge form and signed
 * with its request (`<count>.<HMAC>`), so a page cannot lower it. Empty is the first answer.
 * Undefined for an edited value.
 */
export function signTries(sealer: Sealer, creq: string, count: number): string {
  return `${count}.${sealer.mac('tds-tries', `${count}.${creq}`)}`
}

export function openTries(sealer: Sealer, creq: string, value: string): number | undefined {
  if (value === '') return 0
  const [count, mac, extra] = value.split('.')
  if (extra !== undefined || !count || !/^\d{1,2}$/.test(count) || !mac) return undefined
  return sealer.macMatches('tds-tries', `${count}.${creq}`, mac) ? Number(count) : undefined
}
