import type { Kysely } from 'kysely'
import type { PaymentsTables } from '../../tables.ts'

// Row types of the vault's tables (migrations 202611220100_create_vault, 202611220140_spent_vault_tokens). `sealed` columns hold
// AES-256-GCM ciphertext (vault.crypto.ts), never a card number or security code in clear.

export type VaultTokenType = 'pcn' | 'pcsc'

interface VaultKeysTable {
  id: string
  secret: string
  created: string
}

/** Tokens already spent on an authorization, kept until they expire (so each is used once). */
interface VaultSpentTokensTable {
  /** SHA-256 of the token: the token itself is never stored. */
  token_hash: string
  expires: string
}

interface VaultCardsTable {
  /** The `card_ref` of transactions: `vcard_` and 24 hex digits. */
  id: string
  sealed: string
  created: string
}

export interface VaultTables {
  payments_vault_keys: VaultKeysTable
  payments_vault_spent_tokens: VaultSpentTokensTable
  payments_vault_cards: VaultCardsTable
}

/** The payments database seen with the vault's tables. */
export type VaultDb = Kysely<PaymentsTables & VaultTables>
