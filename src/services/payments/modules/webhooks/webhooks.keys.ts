import { randomBytes } from 'node:crypto'
import type { Secrets } from '../../../../core/security/keyring.ts'
import { createSealer, type Sealer } from '../vault/index.ts'

/** The webhook key's name in the secrets file. */
const WEBHOOK_SECRET = 'payments.webhooks'

/**
 * Seals endpoint signing secrets. A receiver verifies with the secret itself, so Triad must be
 * able to read it back to sign: it is sealed (AES-256-GCM, the endpoint id as additional data),
 * not hashed, under its own key — `PAYMENTS_WEBHOOK_KEY`, or generated into the secrets file —
 * kept apart from the database like the card vault's.
 */
export function createSecretBox(secrets: Secrets, configured: string | undefined) {
  const keyring = secrets.keyring({
    name: WEBHOOK_SECRET,
    envVar: 'PAYMENTS_WEBHOOK_KEY',
    supplied: (configured ?? '')
      .split(',')
      .map((key) => key.trim().toLowerCase())
      .filter(Boolean),
    generate: () => randomBytes(32).toString('hex'),
  })
  let built: { version: number; sealer: Sealer } | undefined

  async function sealer(refresh = false): Promise<Sealer> {
    const set = refresh ? await keyring.refresh() : await keyring.current()
    if (built?.version !== set.version) {
      built = { version: set.version, sealer: createSealer(set.keys.map((key) => ({ id: key.id, key: Buffer.from(key.secret, 'hex') }))) }
    }
    return built.sealer
  }

  return {
    /** Reads the keys (generating the first one into the secrets file when none is supplied). */
    init: () => keyring.init(),
    async seal(plain: string, endpointId: string): Promise<string> {
      return (await sealer()).seal(plain, endpointId)
    },
    /** The secret, or undefined when no key known here opens it (a key another process added is looked for once). */
    async open(sealed: string, endpointId: string): Promise<string | undefined> {
      const current = await sealer()
      const opened = current.open(sealed, endpointId)
      if (opened !== undefined) return opened
      const id = current.keyIdOf(sealed)
      if (id === undefined || current.knows(id)) return undefined
      return (await sealer(true)).open(sealed, endpointId)
    },
  }
}

export type SecretBox = ReturnType<typeof createSecretBox>

/**
 * A new signing secret in Standard Webhooks' form: `whsec_` and 32 random bytes in standard
 * base64 (padded), which every Standard Webhooks verifier decodes into its HMAC key. Triad's own
 * `Triad-Signature` keys its HMAC with the whole string (webhooks.signing.ts).
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}
