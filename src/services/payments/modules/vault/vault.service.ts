import { randomBytes } from 'node:crypto'
import type { Clock } from '../../../../core/clock.ts'
import type { Database } from '../../../../core/db/create-db.ts'
import { withTransaction } from '../../../../core/db/transaction.ts'
import type { IdGenerator } from '../../../../core/ids.ts'
import { generateSecretToken, hashSecretToken } from '../../../../core/security/secret-token.ts'
import { clientErrors } from '../client-payments/client.errors.ts'
import { luhnValid, TEST_CARD_NUMBERS } from './cards.ts'
import { createSealer, type Sealer } from './vault.crypto.ts'
import * as repo from './vault.repository.ts'
import type { VaultDb, VaultTokenType } from './vault.table.ts'

const PRUNE_EVERY_MS = 60_000

export interface VaultDeps {
  database: { db: VaultDb; dialect: Database['dialect'] }
  clock: Clock
  ids: IdGenerator
  /** PAYMENTS_VAULT_KEY (64 hex digits), or undefined to use the key generated once and kept in the database. */
  configuredKey: string | undefined
  tokenTtlMs: number
}

/** A token looked up for a payment: what it holds, opened, and the hash that spends it. */
export interface RedeemedToken {
  hash: string
  value: string
}

/**
 * The vault: card numbers (`pcn`) and security codes (`pcsc`) exchanged for short-lived
 * single-use tokens, and card numbers kept for later charges under a `card_ref`
 * (`vcard_<24 hex>`). Values are sealed with AES-256-GCM before they reach the database and
 * are never logged or returned.
 */
export function createVaultService(deps: VaultDeps) {
  const { db } = deps.database
  let sealerPromise: Promise<Sealer> | undefined
  let lastPrune = 0

  async function loadSealer(): Promise<Sealer> {
    if (deps.configuredKey) return createSealer(Buffer.from(deps.configuredKey, 'hex'))
    let secret = await repo.findStoredSecret(db, 'vault')
    if (secret === undefined) {
      await repo.insertSecretIfAbsent(db, 'vault', randomBytes(32).toString('hex'), deps.clock.now().toISOString())
      secret = await repo.findStoredSecret(db, 'vault')
    }
    if (secret === undefined) throw new Error('the vault key could not be stored')
    return createSealer(Buffer.from(secret, 'hex'))
  }

  /** The sealer, built once (the stored key is read or generated on first use, after migrations). */
  function sealer(): Promise<Sealer> {
    sealerPromise ??= loadSealer().catch((error: unknown) => {
      sealerPromise = undefined
      throw error
    })
    return sealerPromise
  }

  async function pruneExpired(now: Date) {
    if (now.getTime() - lastPrune < PRUNE_EVERY_MS) return
    lastPrune = now.getTime()
    await repo.deleteTokensExpiredBefore(db, now.toISOString())
  }

  return {
    sealer,

    async tokenize(type: VaultTokenType, rawValue: string): Promise<string> {
      const value = normalize(type, rawValue)
      const now = deps.clock.now()
      const token = generateSecretToken(32)
      const hash = hashSecretToken(token)
      const sealed = (await sealer()).seal(value, `token:${hash}`)
      await repo.insertToken(db, {
        token_hash: hash,
        type,
        sealed,
        created: now.toISOString(),
        expires: new Date(now.getTime() + deps.tokenTtlMs).toISOString(),
        used: 0,
      })
      await pruneExpired(now)
      return token
    },

    /**
     * Opens a token for a payment without spending it (the challenge loop sends the same body
     * several times). `path` names the field in errors (TOKEN_INVALID, TOKEN_TYPE_UNEXPECTED).
     */
    async redeem(token: string, type: VaultTokenType, path: string): Promise<RedeemedToken> {
      const hash = hashSecretToken(token)
      const row = token.length > 0 && token.length <= 512 ? await repo.findToken(db, hash) : undefined
      if (!row || row.used === 1 || row.expires <= deps.clock.now().toISOString()) throw clientErrors.tokenInvalid(path)
      if (row.type !== type) throw clientErrors.tokenTypeUnexpected(path)
      const value = (await sealer()).open(row.sealed, `token:${hash}`)
      if (value === undefined) throw clientErrors.tokenInvalid(path)
      return { hash, value }
    },

    /**
     * Spends tokens for one authorization, all or none, so that two requests racing with the
     * same tokens cannot both be authorized, and keeps the card number for later charges, in
     * one database transaction. Returns the new `card_ref`. `paths` name the tokens in errors.
     */
    async spendAndStoreCard(tokens: Array<{ hash: string; path: string }>, number: string): Promise<string> {
      const now = deps.clock.now().toISOString()
      const id = `vcard_${deps.ids.timeOrdered()}`
      const sealed = (await sealer()).seal(number, `card:${id}`)
      await withTransaction(deps.database, async (trx) => {
        for (const token of tokens) {
          if (!(await repo.spendToken(trx, token.hash, now))) throw clientErrors.tokenInvalid(token.path)
        }
        await repo.insertCard(trx, { id, sealed, created: now })
      })
      return id
    },

    /** The card number behind a `card_ref`, for an acquirer that needs it; undefined when unknown. */
    async openCard(ref: string): Promise<string | undefined> {
      const sealed = await repo.findCardSealed(db, ref)
      return sealed === undefined ? undefined : (await sealer()).open(sealed, `card:${ref}`)
    },
  }
}

export type VaultService = ReturnType<typeof createVaultService>

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
