import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import type { Keyring, KeySet } from '../../../../core/security/keyring.ts'
import { hashSecretToken } from '../../../../core/security/secret-token.ts'
import { clientErrors } from '../../http/client-errors.ts'
import { luhnValid, TEST_CARD_NUMBERS } from './cards.ts'
import { createSealer, type Sealer } from './vault.crypto.ts'
import { moveVaultKeysOutOfDatabase, type VaultLog } from './vault.keys.ts'
import * as repo from './vault.repository.ts'
import type { VaultDb, VaultTokenType } from './vault.table.ts'

const PRUNE_EVERY_MS = 60_000

export interface VaultDeps {
  database: { db: VaultDb; dialect: Database['dialect'] }
  clock: Clock
  ids: IdGenerator
  /** The vault keys (vault.keys.ts): PAYMENTS_VAULT_KEY first when set, then those of the secrets file. */
  keyring: Keyring
  tokenTtlMs: number
}

/** A token opened for a payment: what it holds, and what spends it. */
export interface RedeemedToken {
  hash: string
  value: string
  expires: string
}

interface TokenContent {
  /** Type. */
  t: VaultTokenType
  /** Value (digits). */
  v: string
  /** Expiry, ms since the epoch. */
  e: number
}

const TOKEN_AAD = 'vault-token'

/**
 * The vault: card numbers (`pcn`) and security codes (`pcsc`) exchanged for short-lived
 * single-use tokens, and card numbers kept for later charges under a `card_ref`
 * (`vcard_<24 hex>`).
 *
 * A token is self-contained: its type, value and expiry sealed with AES-256-GCM under the
 * vault key (so it is opaque, cannot be forged or edited, and only Triad can open it). Handing
 * one out writes nothing; the database remembers only which tokens were spent, until they
 * expire. Values are never logged or returned, and reach the database only sealed.
 */
export function createVaultService(deps: VaultDeps) {
  const { db } = deps.database
  const { keyring } = deps
  let built: { version: number; sealer: Sealer } | undefined
  let lastPrune = 0

  function sealerOf(set: KeySet): Sealer {
    if (built?.version !== set.version) {
      built = { version: set.version, sealer: createSealer(set.keys.map((key) => ({ id: key.id, key: Buffer.from(key.secret, 'hex') }))) }
    }
    return built.sealer
  }

  /** The sealer over the current keys: it seals under the newest, opens under any. */
  async function sealer(): Promise<Sealer> {
    return sealerOf(await keyring.current())
  }

  /**
   * Opens a sealed value; a value sealed under a key this instance does not know yet (another
   * process rotated a moment ago) makes it read the secrets file again, once.
   */
  async function open(sealed: string, aad: string): Promise<string | undefined> {
    let current = await sealer()
    const opened = current.open(sealed, aad)
    if (opened !== undefined) return opened
    const id = current.keyIdOf(sealed)
    if (id === undefined || current.knows(id)) return undefined
    current = sealerOf(await keyring.refresh())
    return current.open(sealed, aad)
  }

  async function pruneSpent(now: Date) {
    if (now.getTime() - lastPrune < PRUNE_EVERY_MS) return
    lastPrune = now.getTime()
    await repo.deleteSpentExpiredBefore(db, now.toISOString())
  }

  return {
    sealer,
    sealerOf,
    keyring,

    /**
     * Start-up: keys that older versions kept in the database move to the secrets file, then the
     * keyring is read (and a first key generated into the file when there is none at all).
     */
    async init(log: VaultLog): Promise<void> {
      await moveVaultKeysOutOfDatabase(db, keyring, log)
      const { generated } = await keyring.init()
      if (generated) log.info(`generated the card vault key into the secrets file (set ${keyring.envVar} to supply one from outside)`)
    },

    /** Live merchants take payments only with a vault key supplied from outside (environment, or a secrets file the operator named). */
    liveReady: () => keyring.supplied(),

    async tokenize(type: VaultTokenType, rawValue: string): Promise<string> {
      const value = normalize(type, rawValue)
      const content: TokenContent = { t: type, v: value, e: deps.clock.now().getTime() + deps.tokenTtlMs }
      return (await sealer()).seal(JSON.stringify(content), TOKEN_AAD)
    },

    /**
     * Opens a token for a payment without spending it (the challenge loop sends the same body
     * several times). `path` names the field in errors (TOKEN_INVALID, TOKEN_TYPE_UNEXPECTED).
     */
    async redeem(token: string, type: VaultTokenType, path: string): Promise<RedeemedToken> {
      const opened = token.length <= 512 ? await open(token, TOKEN_AAD) : undefined
      const content = opened === undefined ? undefined : parseContent(opened)
      const now = deps.clock.now()
      if (!content || content.e <= now.getTime()) throw clientErrors.tokenInvalid(path)
      const hash = hashSecretToken(token)
      if (await repo.isSpent(db, deps.database.dialect, hash)) throw clientErrors.tokenInvalid(path)
      if (content.t !== type) throw clientErrors.tokenTypeUnexpected(path)
      return { hash, value: content.v, expires: new Date(content.e).toISOString() }
    },

    /**
     * Spends tokens for one authorization, all or none, so that two requests racing with the
     * same tokens cannot both be authorized, and keeps the card number for later charges, in
     * one database transaction. Returns the new `card_ref`. `path` names a token in errors.
     */
    async spendAndStoreCard(tokens: Array<{ hash: string; expires: string; path: string }>, number: string): Promise<string> {
      const now = deps.clock.now()
      const id = `vcard_${deps.ids.timeOrdered()}`
      const sealed = (await sealer()).seal(number, `card:${id}`)
      await withTransaction(deps.database, async (trx) => {
        for (const token of tokens) {
          if (!(await repo.markSpent(trx, deps.database.dialect, token.hash, token.expires))) throw clientErrors.tokenInvalid(token.path)
        }
        await repo.insertCard(trx, deps.database.dialect, { id, sealed, created: now.toISOString() })
      })
      await pruneSpent(now)
      return id
    },

    /** Forgets a stored card (its authorization was declined, so nothing will charge it again). */
    async forgetCard(ref: string): Promise<void> {
      await repo.deleteCard(db, ref)
    },

    /** The card number behind a `card_ref`, for an acquirer that needs it; undefined when unknown. */
    async openCard(ref: string): Promise<string | undefined> {
      const sealed = await repo.findCardSealed(db, ref)
      return sealed === undefined ? undefined : open(sealed, `card:${ref}`)
    },

    /**
     * What the vault holds for a `card_ref`: nothing (`kept: false`, a reference from elsewhere),
     * or the number, which is undefined when no known key opens it (a database restored without
     * its secrets file, or a retired key).
     */
    async storedCard(ref: string): Promise<{ kept: false } | { kept: true; number: string | undefined }> {
      const sealed = await repo.findCardSealed(db, ref)
      return sealed === undefined ? { kept: false } : { kept: true, number: await open(sealed, `card:${ref}`) }
    },
  }
}

export type VaultService = ReturnType<typeof createVaultService>

function parseContent(text: string): TokenContent | undefined {
  try {
    const content = JSON.parse(text) as Partial<TokenContent>
    return (content.t === 'pcn' || content.t === 'pcsc') && typeof content.v === 'string' && typeof content.e === 'number' ? (content as TokenContent) : undefined
  } catch {
    return undefined
  }
}

/** Digits only (spaces and dashes as typed are dropped); refuses what cannot be a card number or code. */
function normalize(type: VaultTokenType, raw: string): string {
  const value = raw.replace(/[\s-]/g, '')
  if (type === 'pcsc') {
    if (!/^\d{3,4}$/.test(value)) throw clientErrors.requestInvalid('a payment card security code (pcsc) is 3 or 4 digits')
    return value
  }
  if (!/^\d{10,19}$/.test(value)) throw clientErrors.requestInvalid('a payment card number (pcn) is 10 to 19 digits')
  if (!luhnValid(value) && !TEST_CARD_NUMBERS.has(value)) throw clientErrors.requestInvalid('the payment card number fails its check digit (Luhn)')
  return value
}
