import type { ServiceBase } from '../../core/service.ts'
import { deriveKey, generateSecretToken } from '../../core/security/secret-token.ts'
import type { AuthnConfig } from './config.ts'
import { authnDatabase } from './db.ts'
import { createEpersonsService } from './modules/epersons/epersons.service.ts'
import { createTokenService } from './modules/sessions/tokens.service.ts'
import { getOrCreateSetting } from './modules/settings/settings.repository.ts'

/**
 * The services of authn, wired once per process. The signing secret is AUTHN_SECRET, or one
 * generated on first start and kept in the database, so every instance signs with the same key.
 */
export async function createAuthnServices(deps: ServiceBase & { config: AuthnConfig }) {
  const { config, clock, ids } = deps
  const database = authnDatabase(deps.database)
  const secret = config.secret ?? (await getOrCreateSetting(database.db, 'jwt_secret', () => generateSecretToken(48)))
  const siteUuid = await getOrCreateSetting(database.db, 'site_uuid', () => ids.uuid())
  const tokens = createTokenService({
    database,
    clock,
    ids,
    // One key per token kind, derived from the one secret: a short-lived token's signature can never verify as a login token's.
    keys: { login: deriveKey(secret, 'authn/login-token'), shortLived: deriveKey(secret, 'authn/short-lived-token') },
    tokenLifetimeMs: config.tokenLifetimeMs,
    refreshGraceMs: config.refreshGraceMs,
    sessionMaxAgeMs: config.sessionMaxAgeMs,
    shortLivedLifetimeMs: config.shortLivedLifetimeMs,
    revocationCacheMs: config.revocationCacheMs,
  })
  const epersons = createEpersonsService({ database, clock, ids, tokens })
  return { database, tokens, epersons, siteUuid }
}
