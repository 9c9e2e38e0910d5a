import type { ServiceBase } from '../../core/service.ts'
import type { AuthnConfig } from './config.ts'
import { authnDatabase } from './tables.ts'
import { createEpersonsService } from './modules/epersons/index.ts'
import { createPasskeysService } from './modules/passkeys/index.ts'
import { createPersonalTokensService } from './modules/personal-tokens/index.ts'
import { createSessionsService, createTokenService } from './modules/sessions/index.ts'
import { getOrCreateSetting } from './modules/settings/index.ts'
import { moveSigningSecretOutOfDatabase, type SecretsLog, signingKeyring } from './modules/settings/index.ts'

const silent: SecretsLog = { info: () => {} }

/**
 * The services of authn, wired once per process. The signing secret is AUTHN_SECRET, or one
 * generated on first start into the secrets file (never the database), which every instance
 * shares; older keys in the file keep verifying the tokens they signed until retired.
 */
export async function createAuthnServices(deps: ServiceBase & { config: AuthnConfig }, log: SecretsLog = silent) {
  const { config, clock, ids } = deps
  const database = authnDatabase(deps.database)
  const keyring = signingKeyring(deps.secrets, config.secret)
  await moveSigningSecretOutOfDatabase(database.db, keyring, clock, log)
  await keyring.init()
  const siteUuid = await getOrCreateSetting(database.db, 'site_uuid', () => ids.uuid())
  const tokens = createTokenService({
    database,
    clock,
    ids,
    keyring,
    tokenLifetimeMs: config.tokenLifetimeMs,
    refreshGraceMs: config.refreshGraceMs,
    sessionMaxAgeMs: config.sessionMaxAgeMs,
    shortLivedLifetimeMs: config.shortLivedLifetimeMs,
    revocationCacheMs: config.revocationCacheMs,
  })
  const epersons = createEpersonsService({ database, clock, ids, tokens })
  const sessions = createSessionsService({ database, clock, tokens })
  const personalTokens = createPersonalTokensService({ database, clock, ids, revocationCacheMs: config.revocationCacheMs })
  const passkeys = createPasskeysService({ database, clock, config: config.passkeys })
  return { database, tokens, epersons, sessions, personalTokens, passkeys, siteUuid, keyring }
}
