import { randomBytes } from 'node:crypto'
import type { Keyring, Secrets } from '../../../../core/security/keyring.ts'
import * as repo from './vault.repository.ts'
import type { VaultDb } from './vault.table.ts'

/** The vault keys' name in the secrets file. */
const VAULT_SECRET = 'payments.vault'

export interface VaultLog {
  info(message: string): void
}

/** The vault keyring: PAYMENTS_VAULT_KEY first when set (its first key seals), then the keys of the secrets file. */
export function vaultKeyring(secrets: Secrets, configured: string | undefined): Keyring {
  return secrets.keyring({
    name: VAULT_SECRET,
    envVar: 'PAYMENTS_VAULT_KEY',
    supplied: (configured ?? '')
      .split(',')
      .map((key) => key.trim().toLowerCase())
      .filter(Boolean),
    generate: () => randomBytes(32).toString('hex'),
  })
}

/**
 * Start-up step for databases from before the secrets file: a key found in
 * `payments_vault_keys` is written to the secrets file first, then deleted from the table (a
 * crash in between loses nothing). Cards it sealed (`v1` values, which name no key) keep
 * opening: they are tried under every key until `rotate-key` re-seals them.
 */
export async function moveVaultKeysOutOfDatabase(db: VaultDb, keyring: Keyring, log: VaultLog): Promise<void> {
  for (const legacy of await repo.findLegacyKeys(db)) {
    const key = await keyring.adopt(legacy.secret, legacy.created)
    await repo.deleteLegacyKey(db, legacy.id, legacy.secret)
    log.info(`moved the card vault key out of the database (payments_vault_keys) into the secrets file as key ${key.id}`)
  }
}
