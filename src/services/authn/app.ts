import cookie from '@fastify/cookie'
import type { FastifyInstance } from 'fastify'
import { refuseSwitchedOffRoutes, routesBehindSetting, type SettingRequirement } from '../../core/http/behind-setting.ts'
import type { ServiceDefinition } from '../../core/service.ts'
import { authnCommands } from './cli.ts'
import type { AuthnConfig } from './config.ts'
import { authnErrors, dspaceErrorBody, installDspaceErrors } from './errors.ts'
import { migrations } from './migrations/index.ts'
import { installAuthentication } from './modules/auth-context/index.ts'
import { installCors } from './modules/cors/index.ts'
import { installCsrf } from './modules/csrf/index.ts'
import { csrfRoutes } from './modules/csrf/index.ts'
import { epersonsRoutes } from './modules/epersons/index.ts'
import { ADMINISTRATOR_GROUP } from './modules/epersons/index.ts'
import { type AuditLog, requestLogAudit } from './modules/audit/index.ts'
import { authzRoutes } from './modules/impersonation/index.ts'
import { createChallenge } from './challenge.ts'
import { loginRoutes } from './modules/login/index.ts'
import { createLoginService } from './modules/login/index.ts'
import { oidcRoutes } from './modules/oidc/index.ts'
import { createOidcService, OIDC_METHOD } from './modules/oidc/index.ts'
import { createHandoffService } from './modules/handoffs/index.ts'
import {
  createFederatedPeople,
  createSamlService,
  createShibbolethService,
  loadSpCredentials,
  SAML_METHOD,
  SAML_PATH,
  samlRoutes,
  SHIBBOLETH_METHOD,
  shibbolethRoutes,
} from './modules/saml/index.ts'
import { passkeysRoutes, personalTokensRoutes, sessionsRoutes } from './modules/credentials/index.ts'
import { PASSKEY_METHOD } from './modules/passkeys/index.ts'
import { createSpecialGroupsService } from './modules/special-groups/index.ts'
import { statusRoutes } from './modules/status/index.ts'
import { createThrottleService } from './modules/throttle/index.ts'
import { createAuthnMetrics } from './metrics.ts'
import { createRedirectGuard } from './redirects.ts'
import { createAuthnServices } from './services.ts'

/** What tests (or an operator's wiring) may replace: any part of the audit trail (the rest writes to the request log). */
export interface AuthnProviders {
  auditLog: Partial<AuditLog>
}

/** The settings that turn on authn's optional sign-on routes (docs/authn.md), as /docs names them. */
const SWITCHES = {
  oidc: { setting: 'AUTHN_OIDC_ISSUER or AUTHN_OIDC_PRESET', feature: 'OpenID Connect sign-on routes' },
  shibboleth: { setting: 'AUTHN_SHIBBOLETH=true', feature: 'Shibboleth sign-on routes' },
  passkeys: { setting: 'AUTHN_PASSKEY_RP_ID', feature: 'Passkey routes' },
  saml: { setting: 'AUTHN_SAML_PROVIDERS', feature: 'SAML sign-on routes' },
} satisfies Record<string, SettingRequirement>

// DSpace serves the same API at /api and, behind its usual proxy layout, /server/api.
const API_PATHS = ['/api', '/server/api'] as const

export const authnService: ServiceDefinition<AuthnConfig, AuthnProviders> = {
  name: 'authn',
  migrations,
  paths: [...API_PATHS, SAML_PATH],
  errorBody: dspaceErrorBody(() => new Date()),
  commands: authnCommands,
  plugin: (deps) => async (app) => {
    const { config, clock } = deps
    const { database, tokens, epersons, sessions, personalTokens, passkeys, siteUuid } = await createAuthnServices(deps, app.log)
    const audit: AuditLog = { ...requestLogAudit, ...deps.auditLog }
    await epersons.ensureGroup(ADMINISTRATOR_GROUP, true)
    if (config.adminEmail) await epersons.ensureAdministrator(config.adminEmail, config.adminPassword)
    const specialGroups = await createSpecialGroupsService({
      epersons,
      ipGroups: config.ipGroups,
      // A passkey replaces the password of a local account, so it grants the same groups.
      // SAML's groups are per provider and per attribute value: each login's hand-off carries them.
      methodGroups: { password: config.passwordGroups, [PASSKEY_METHOD]: config.passwordGroups, [OIDC_METHOD]: config.oidc?.groups ?? [], [SAML_METHOD]: [], [SHIBBOLETH_METHOD]: [] },
    })
    const throttle = createThrottleService({ database, clock, perAccount: config.loginAttemptsPerAccount, perIp: config.loginAttemptsPerIp })
    const handoffs = createHandoffService({ database, clock })
    const people = createFederatedPeople({ database, clock, epersons })
    const oidc = config.oidc ? createOidcService({ database, clock, epersons, people, handoffs, config: config.oidc }) : undefined
    const saml = config.saml
      ? createSamlService({
          database,
          clock,
          people,
          handoffs,
          settings: config.saml,
          credentials: await loadSpCredentials(deps.secrets, { key: config.saml.spKey, cert: config.saml.spCert }),
          sessionMaxAgeMs: config.sessionMaxAgeMs,
          endSessions: async (epersonUuid) => {
            await tokens.revokeAll(epersonUuid)
          },
          log: (message) => app.log.warn(message),
        })
      : undefined
    const shibboleth = config.shibboleth ? createShibbolethService({ people, handoffs, settings: config.shibboleth }) : undefined
    const login = createLoginService({ tokens, epersons, specialGroups, throttle, handoffs, metrics: createAuthnMetrics(deps.metrics) })
    const challenge = createChallenge({
      realm: config.realm,
      oidcEnabled: oidc !== undefined,
      passkeysEnabled: config.passkeys !== undefined,
      samlLocations: config.saml?.providers.map((provider) => `${config.saml?.baseUrl}${SAML_PATH}/authenticate/${provider.id}`),
      shibbolethLoginUrl: config.shibboleth?.loginUrl,
    })
    const isAllowedRedirect = createRedirectGuard(config.allowedOrigins)

    await app.register(cookie)
    for (const prefix of API_PATHS) {
      await app.register(
        async (scope: FastifyInstance) => {
          installDspaceErrors(scope, () => clock.now())
          // DSpace's filter order: CORS, then CSRF, then the token; so a bad origin or CSRF pair is refused whatever the credentials.
          installCors(scope, { allowedOrigins: config.allowedOrigins })
          // A route switched off by its setting says so (404) before CSRF and the token are judged;
          // after CORS, which adds the headers a permitted origin's page needs to read that 404.
          scope.addHook('onRequest', refuseSwitchedOffRoutes(authnErrors.notFound))
          installCsrf(scope, { cookiePrefix: config.csrfCookiePrefix })
          installAuthentication(scope, {
            tokens,
            personalTokens,
            epersons,
            specialGroups,
            trustedProxies: config.trustedProxies,
            loginAs: config.loginAs,
            audit,
          })
          await scope.register(csrfRoutes)
          await scope.register(statusRoutes, { specialGroups, challenge })
          await scope.register(loginRoutes, {
            login,
            tokens,
            challenge,
            logoutUrl: config.logoutUrl,
            isAllowedRedirect,
            federatedLogout: saml ? (epersonUuid, method, returnUrl) => (method === SAML_METHOD ? saml.startLogout(epersonUuid, returnUrl) : Promise.resolve(undefined)) : undefined,
          })
          await scope.register(epersonsRoutes, { epersons, challenge })
          await scope.register(authzRoutes, { epersons, siteUuid, loginAs: config.loginAs })
          // Routes behind a setting are always registered (so /docs lists them); switched off, they answer 404 naming it.
          const oidcOptions = oidc && { oidc, isAllowedRedirect, defaultRedirect: config.allowedOrigins[0] }
          await scope.register(routesBehindSetting(oidcRoutes, oidcOptions, SWITCHES.oidc, authnErrors.notFound))
          const shibbolethOptions = shibboleth && { shibboleth, challenge, trustedProxies: config.trustedProxies, isAllowedRedirect, defaultRedirect: config.allowedOrigins[0] }
          await scope.register(routesBehindSetting(shibbolethRoutes, shibbolethOptions, SWITCHES.shibboleth, authnErrors.notFound))
          await scope.register(sessionsRoutes, { sessions, epersons, challenge, audit })
          await scope.register(personalTokensRoutes, { personalTokens, epersons, challenge, audit })
          const passkeysOptions = config.passkeys && { passkeys, login, epersons, challenge, audit }
          await scope.register(routesBehindSetting(passkeysRoutes, passkeysOptions, SWITCHES.passkeys, authnErrors.notFound))
        },
        { prefix },
      )
    }
    await app.register(
      async (scope: FastifyInstance) => {
        // No CORS or CSRF filter: the provider's page posts here cross-site, and the response's signature is the credential.
        installDspaceErrors(scope, () => clock.now())
        const samlOptions = saml && { saml, isAllowedRedirect, defaultRedirect: config.allowedOrigins[0] }
        await scope.register(routesBehindSetting(samlRoutes, samlOptions, SWITCHES.saml, authnErrors.notFound))
      },
      { prefix: SAML_PATH },
    )
  },
}
