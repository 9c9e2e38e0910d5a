import { setTimeout as delay } from 'node:timers/promises'
import type { Keyring } from '../../../../core/security/keyring.ts'
import { LEGACY_KEY_ID, type Sealer } from './vault.crypto.ts'
import * as repo from './vault.repository.ts'
import type { VaultDb } from './vault.table.ts'

/**
 * Key rotation of the card vault, safe while servers run: the new key goes into the secrets
 * file first (servers open its values at once, re-reading the file on an unknown key id, and
 * seal under it within their check interval); then every stored card sealed under another key
 * is re-sealed in batches, each card by a conditional update (`where sealed = <what was read>`),
 * so a card deleted or re-sealed meanwhile is left alone. Old keys are retired only when no
 * stored card uses them.
 */

export interface ResealResult {
  activeKeyId: string
  resealed: number
  /** Cards no known key opens (sealed under a key that was lost): left as they are. */
  unreadable: number
}

export interface KeyUsage {
  id: string
  source: 'environment' | 'file'
  created: string | undefined
  active: boolean
  cards: number
}

const prefixOf = (id: string) => (id === LEGACY_KEY_ID ? 'v1.' : `v2.${id}.`)

async function sealerNow(keyring: Keyring, sealerOf: (keys: Awaited<ReturnType<Keyring['refresh']>>) => Sealer): Promise<Sealer> {
  return sealerOf(await keyring.refresh())
}

/** One pass over every stored card: re-seals those not sealed under the active key. */
async function resealPass(db: VaultDb, sealer: Sealer, batchSize: number, onProgress: ResealOptions['onProgress']): Promise<ResealResult> {
  let cursor = ''
  let resealed = 0
  let unreadable = 0
  let scanned = 0
  const total = onProgress ? await repo.countCardsSealedAs(db, '') : 0
  for (;;) {
    const batch = await repo.cardsAfter(db, cursor, batchSize)
    for (const card of batch) {
      if (sealer.keyIdOf(card.sealed) === sealer.activeKeyId) continue
      const aad = `card:${card.id}`
      const plain = sealer.open(card.sealed, aad)
      if (plain === undefined) {
        unreadable++
        continue
      }
      if (await repo.resealCard(db, card.id, card.sealed, sealer.seal(plain, aad))) resealed++
    }
    scanned += batch.length
    onProgress?.(scanned, Math.max(total, scanned))
    const last = batch.at(-1)
    if (!last || batch.length < batchSize) break
    cursor = last.id
  }
  return { activeKeyId: sealer.activeKeyId, resealed, unreadable }
}

export interface ResealOptions {
  batchSize: number
  /** How long a running server may take to notice the new key (the keyring's check interval). */
  settleMs: number
  sealerOf: (keys: Awaited<ReturnType<Keyring['refresh']>>) => Sealer
  /** After each batch of a pass: the stored cards looked at so far, and all of them. */
  onProgress?: (scanned: number, total: number) => void
}

/**
 * Re-seals every stored card under the active key. A server that has not noticed the new key
 * yet may still seal a card or two under the old one during the first pass: while any remain,
 * it waits for servers to notice and passes again (at most three more times).
 */
export async function resealAll(db: VaultDb, keyring: Keyring, options: ResealOptions): Promise<ResealResult> {
  let sealer = await sealerNow(keyring, options.sealerOf)
  const total = await resealPass(db, sealer, options.batchSize, options.onProgress)
  for (let pass = 0; pass < 3; pass++) {
    const remaining = await countNotUnder(db, sealer)
    if (remaining <= total.unreadable) break
    await delay(options.settleMs)
    sealer = await sealerNow(keyring, options.sealerOf)
    const again = await resealPass(db, sealer, options.batchSize, options.onProgress)
    total.resealed += again.resealed
    total.unreadable = again.unreadable
  }
  return { ...total, activeKeyId: sealer.activeKeyId }
}

async function countNotUnder(db: VaultDb, sealer: Sealer): Promise<number> {
  const all = await repo.countCardsSealedAs(db, '')
  return all - (await repo.countCardsSealedAs(db, prefixOf(sealer.activeKeyId)))
}

/** Every key with the number of stored cards it sealed; `legacy` counts cards from before key ids. */
export async function keyUsage(db: VaultDb, keyring: Keyring): Promise<{ keys: KeyUsage[]; legacyCards: number }> {
  const set = await keyring.refresh()
  const keys: KeyUsage[] = []
  for (const key of set.keys) {
    keys.push({ id: key.id, source: key.source, created: key.created, active: key.id === set.active.id, cards: await repo.countCardsSealedAs(db, prefixOf(key.id)) })
  }
  return { keys, legacyCards: await repo.countCardsSealedAs(db, prefixOf(LEGACY_KEY_ID)) }
}

/** Why a key cannot be retired now, or undefined when it can. */
export async function retireRefusal(db: VaultDb, keyring: Keyring, id: string): Promise<string | undefined> {
  const { keys, legacyCards } = await keyUsage(db, keyring)
  const key = keys.find((item) => item.id === id)
  if (!key) return `no vault key has the id ${id} (see \`triad payments vault keys\`)`
  if (key.source === 'environment') return `key ${id} comes from PAYMENTS_VAULT_KEY: remove it there instead`
  if (key.active) return `key ${id} is the active key: rotate first (\`triad payments vault rotate-key\`)`
  if (key.cards > 0) return `${key.cards} stored card(s) are still sealed under key ${id}: run \`triad payments vault rotate-key\` first`
  if (legacyCards > 0) return `${legacyCards} stored card(s) from before key ids may be sealed under key ${id}: run \`triad payments vault rotate-key\` first`
  return undefined
}
