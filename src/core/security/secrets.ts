import type { Clock } from '../clock.ts'
import type { CoreConfig } from '../config/core-config.ts'
import { createSecrets, type Secrets } from './keyring.ts'
import { openSecretsFile } from './secrets-file.ts'

/** The process's secrets: the file named by TRIAD_SECRETS_FILE (or the default beside the data). */
export function openConfiguredSecrets(core: Pick<CoreConfig, 'secretsFile' | 'secretsFileChosen'>, clock: Clock): Secrets {
  return createSecrets(openSecretsFile(core.secretsFile, { chosen: core.secretsFileChosen }), clock)
}

/**
 * The one warning a production start logs when some secret was not supplied from outside
 * (environment, or a secrets file the operator named): it names what to set. Undefined when
 * there is nothing to warn about.
 */
export function unsuppliedSecretsWarning(secrets: Secrets, core: Pick<CoreConfig, 'production' | 'secretsFile'>): string | undefined {
  const missing = secrets.unsupplied()
  if (!core.production || missing.length === 0) return undefined
  const names = missing.map((item) => item.envVar).join(', ')
  const where = secrets.store.path ? `the default secrets file ${secrets.store.path}, beside the data` : 'memory'
  return (
    `SECURITY: NODE_ENV=production, but ${names} ${missing.length === 1 ? 'is' : 'are'} not supplied: the generated keys are kept in ${where}. ` +
    `Set ${names} in the environment, or TRIAD_SECRETS_FILE to a file kept apart from the database and its backups (see docs/operations.md). ` +
    'Until the card vault key is supplied, live merchants cannot take payments.'
  )
}
