import { createHash } from 'node:crypto'
import * as client from 'openid-client'
import type { Clock } from '../../../../core/clock.ts'
import { hashSecretToken } from '../../../../core/security/secret-token.ts'
import type { AuthnConfig } from '../../config.ts'
import type { ModuleDatabase } from '../../db.ts'
import type { OidcTables } from './oidc.table.ts'
import { authnErrors } from '../../errors.ts'
import type { EpersonsService } from '../epersons/index.ts'
import type { HandoffService } from '../handoffs/index.ts'
import type { FederatedPeople } from '../saml/index.ts'
import { deleteExpired, insertFlow, takeFlow } from './oidc.repository.ts'

type AuthnDatabase = ModuleDatabase<OidcTables>

export const OIDC_METHOD = 'oidc'
const FLOW_LIFETIME_MS = 10 * 60_000

type OidcConfig = NonNullable<AuthnConfig['oidc']>

/**
 * OpenID Connect sign-on (authorization code + PKCE + nonce). The flow's secrets are kept in
 * the database under a hash of `state`, so the callback may reach any instance. The callback
 * ends with a one-time hand-off code (modules/handoffs) in an HttpOnly cookie, exchanged for a
 * token by POST /authn/login (DSpace's `Authorization-cookie` step).
 */
export function createOidcService(deps: {
  database: AuthnDatabase
  clock: Clock
  epersons: EpersonsService
  people: FederatedPeople
  handoffs: HandoffService
  config: OidcConfig
}): {
  start(callbackUrl: string, redirectUrl: string): Promise<URL>
  finish(currentUrl: URL): Promise<{ code: string; redirectUrl: string }>
} {
  const { database, clock, epersons, people, handoffs, config } = deps
  let discovered: Promise<client.Configuration> | undefined

  function configuration(): Promise<client.Configuration> {
    discovered ??= client
      .discovery(
        new URL(config.issuer),
        config.clientId,
        config.clientSecret,
        undefined,
        config.allowHttp ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        // Try discovery again on the next login rather than failing forever.
        discovered = undefined
        throw error
      })
    return discovered
  }

  async function providerCall<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw authnErrors.signOnFailed(error)
    }
  }

  return {
    async start(callbackUrl, redirectUrl) {
      const cfg = await providerCall(configuration)
      const state = client.randomState()
      const nonce = client.randomNonce()
      const verifier = client.randomPKCECodeVerifier()
      const now = clock.now()
      await deleteExpired(database.db, now.toISOString())
      await insertFlow(database.db, {
        state_hash: hashSecretToken(state),
        code_verifier: verifier,
        nonce,
        redirect_url: redirectUrl,
        expires_at: new Date(now.getTime() + FLOW_LIFETIME_MS).toISOString(),
      })
      return client.buildAuthorizationUrl(cfg, {
        redirect_uri: callbackUrl,
        scope: config.scopes,
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
    },

    async finish(currentUrl) {
      const state = currentUrl.searchParams.get('state')
      const flow = state ? await takeFlow(database.db, hashSecretToken(state)) : undefined
      if (!state || !flow || flow.expires_at <= clock.now().toISOString()) throw authnErrors.badRequest('Unknown or expired sign-on request; start again')
      const cfg = await providerCall(configuration)
      const tokens = await providerCall(() =>
        client.authorizationCodeGrant(cfg, currentUrl, {
          pkceCodeVerifier: flow.code_verifier,
          expectedState: state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        }),
      )
      let claims: Record<string, unknown> = { ...(tokens.claims() ?? {}) }
      if (typeof claims[config.emailClaim] !== 'string') {
        const sub = typeof claims.sub === 'string' ? claims.sub : client.skipSubjectCheck
        claims = { ...claims, ...(await providerCall(() => client.fetchUserInfo(cfg, tokens.access_token, sub))) }
      }
      const claimed = claims[config.emailClaim]
      // An address the provider has not verified would let anyone claim anyone's account.
      const email = typeof claimed === 'string' && claims.email_verified !== false ? claimed : undefined
      const firstName = typeof claims.given_name === 'string' ? claims.given_name : undefined
      const lastName = typeof claims.family_name === 'string' ? claims.family_name : undefined
      const persistentId = config.persistentIdClaim ? claims[config.persistentIdClaim] : undefined
      let epersonUuid: string
      if (typeof persistentId === 'string' && persistentId !== '') {
        // ORCID and the like: the id, linked at the first login, finds the eperson even without an e-mail.
        const who = { email, givenName: firstName, surname: lastName, persistentId }
        epersonUuid = await people.resolve(`oidc:${config.issuer}`, who, config.autoRegister, addressWithoutEmail(config.issuer, persistentId))
      } else {
        if (email === undefined) throw authnErrors.signOnFailed()
        let eperson = await epersons.findByEmail(email)
        if (!eperson && config.autoRegister) eperson = await epersons.create({ email, firstName, lastName })
        if (eperson?.can_log_in !== 1) throw authnErrors.signOnFailed()
        epersonUuid = eperson.uuid
      }
      const code = await handoffs.issue({ epersonUuid, method: OIDC_METHOD, specialGroups: [] })
      return { code, redirectUrl: flow.redirect_url }
    },
  }
}

export type OidcService = ReturnType<typeof createOidcService>

/**
 * The address an account registered from a persistent id alone is created under (most ORCID
 * records keep the e-mail private): the id at the provider's host under `.invalid`, a top-level
 * domain reserved never to resolve (RFC 2606), so nothing is ever sent there and it cannot be
 * anyone's real address. The id itself when it is a plain token (an ORCID iD), else its hash.
 */
function addressWithoutEmail(issuer: string, persistentId: string): string {
  const local = /^[A-Za-z0-9._-]{1,64}$/.test(persistentId) ? persistentId : createHash('sha256').update(persistentId).digest('hex').slice(0, 40)
  return `${local}@${new URL(issuer).hostname}.invalid`
}
