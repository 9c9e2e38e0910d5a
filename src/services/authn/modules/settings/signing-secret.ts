import type { Clock } from '../../../../core/clock.ts'
import type { Keyring, Secrets } from '../../../../core/security/keyring.ts'
import { generateSecretToken } from '../../../../core/security/secret-token.ts'
import type { Executor } from '../../db.ts'
import type { SettingsTables } from './settings.table.ts'
import { deleteSetting, findSetting } from './settings.repository.ts'

type DbExecutor = Executor<SettingsTables>

/** The JWT signing secret's name in the secrets file. */
const SIGNING_SECRET = 'authn.jwt'
/** Where databases from before the secrets file kept it. */
const LEGACY_SETTING = 'jwt_secret'

export interface SecretsLog {
  info(message: string): void
}

/** The signing keyring: AUTHN_SECRET first when set, then the keys in the secrets file. */
export function signingKeyring(secrets: Secrets, configured: string | undefined): Keyring {
  return secrets.keyring({
    name: SIGNING_SECRET,
    envVar: 'AUTHN_SECRET',
    supplied: configured === undefined ? [] : [configured],
    generate: () => generateSecretToken(48),
  })
}

/**
 * Start-up step for databases from before the secrets file: the secret found in
 * `authn_settings` is written to the secrets file first, then deleted from the table, so a
 * crash in between loses nothing. Tokens it signed (they carry no `kid`) keep verifying until
 * they expire, whatever key signs from now on.
 */
export async function moveSigningSecretOutOfDatabase(db: DbExecutor, keyring: Keyring, clock: Clock, log: SecretsLog): Promise<boolean> {
  const legacy = await findSetting(db, LEGACY_SETTING)
  if (legacy === undefined) return false
  const key = await keyring.adopt(legacy, clock.now().toISOString())
  await deleteSetting(db, LEGACY_SETTING, legacy)
  log.info(`moved the JWT signing secret out of the database (authn_settings) into the secrets file as key ${key.id}`)
  return true
}
