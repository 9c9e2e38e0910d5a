import { Type } from '@sinclair/typebox'
import ipaddr from 'ipaddr.js'
import { parseDuration } from '../../core/config/duration.ts'
import { defineSection, Env, splitList } from '../../core/config/load-config.ts'
import { parseRoleGroups, parseSamlProviders, parseShibbolethHeaders, pemFromEnv } from './saml-config.ts'

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number]

export interface IpGroupRule {
  name: string
  ranges: Cidr[]
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a single address (a /32 or /128 range). */
function parseCidr(text: string): Cidr {
  if (text.includes('/')) {
    const [address, bits] = ipaddr.parseCIDR(text)
    return [address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address, bits]
  }
  const address = ipaddr.process(text)
  return [address, address.kind() === 'ipv4' ? 32 : 128]
}

function parseCidrList(name: string, value: string | undefined): Cidr[] {
  return splitList(value).map((item) => {
    try {
      return parseCidr(item)
    } catch {
      throw new Error(`${name} must be a comma-separated list of IP addresses or CIDR ranges (bad item ${JSON.stringify(item)})`)
    }
  })
}

/** `Campus=10.0.0.0/8,192.168.0.0/16;Library=2001:db8::/32` */
function parseIpGroups(value: string | undefined): IpGroupRule[] {
  if (!value) return []
  return value
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const equals = part.indexOf('=')
      const name = equals > 0 ? part.slice(0, equals).trim() : ''
      if (!name) throw new Error(`AUTHN_IP_GROUPS must look like "Name=10.0.0.0/8,192.168.0.0/16;Other=2001:db8::/32" (bad part ${JSON.stringify(part)})`)
      const ranges = parseCidrList('AUTHN_IP_GROUPS', part.slice(equals + 1))
      if (ranges.length === 0) throw new Error(`AUTHN_IP_GROUPS: group ${JSON.stringify(name)} has no address range`)
      return { name, ranges }
    })
}

function parseOrigins(name: string, value: string | undefined): string[] {
  return splitList(value).map((item) => {
    try {
      const url = new URL(item)
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http')
      return url.origin
    } catch {
      throw new Error(`${name} must be a comma-separated list of origins such as https://repo.example.org (bad item ${JSON.stringify(item)})`)
    }
  })
}

/** `https://repo.example.org,http://localhost:4000`: the pages a passkey may be used from. */
function parsePasskeyOrigins(value: string | undefined, rpId: string): string[] {
  const origins = parseOrigins('AUTHN_PASSKEY_ORIGINS', value)
  if (origins.length === 0) return [`https://${rpId}`]
  for (const origin of origins) {
    const host = new URL(origin).hostname
    // WebAuthn's rule: the RP ID is the page's host or a registrable suffix of it.
    if (host !== rpId && !host.endsWith(`.${rpId}`)) throw new Error(`AUTHN_PASSKEY_ORIGINS: ${origin} is not on AUTHN_PASSKEY_RP_ID (${rpId}) or a subdomain of it`)
  }
  return origins
}

const SHORT_LIVED_MAX_MS = 2000

/**
 * OpenID Connect providers known by name. ORCID's OIDC: the iD is `sub`; its ID token and
 * userinfo carry names but no e-mail, so the iD is what finds the eperson again.
 */
const OIDC_PRESETS: Record<string, { issuer: string; scopes: string; persistentIdClaim: string } | undefined> = {
  none: undefined,
  orcid: { issuer: 'https://orcid.org', scopes: 'openid', persistentIdClaim: 'sub' },
  'orcid-sandbox': { issuer: 'https://sandbox.orcid.org', scopes: 'openid', persistentIdClaim: 'sub' },
}

export const authnSection = defineSection(
  Type.Object({
    AUTHN_ADMIN_EMAIL: Env.optionalString('an e-mail address'),
    AUTHN_ADMIN_PASSWORD: Env.optionalString('a password'),
    AUTHN_TOKEN_LIFETIME: Env.duration('30m'),
    AUTHN_SECRET: Env.optionalString('a secret of at least 32 characters', { pattern: '^.{32,}$' }),
    AUTHN_REFRESH_GRACE: Env.duration('60s'),
    AUTHN_SESSION_MAX_AGE: Env.duration('24h'),
    AUTHN_SHORT_LIVED_LIFETIME: Env.duration('2s'),
    AUTHN_REVOCATION_CACHE: Env.duration('1s'),
    AUTHN_REALM: Env.string('the realm named in WWW-Authenticate', { default: 'DSpace REST API' }),
    AUTHN_CSRF_COOKIE_PREFIX: Env.string('letters, digits or dashes', { default: 'DSPACE', pattern: '^[A-Za-z0-9-]{1,32}$' }),
    AUTHN_LOGIN_AS: Env.boolean(false),
    AUTHN_IP_GROUPS: Env.optionalString('"Name=CIDR,CIDR;Other=CIDR"'),
    AUTHN_TRUSTED_PROXIES: Env.optionalString('a comma-separated list of IP addresses or CIDR ranges'),
    AUTHN_PASSWORD_GROUPS: Env.optionalString('a comma-separated list of group names'),
    AUTHN_ALLOWED_ORIGINS: Env.optionalString('a comma-separated list of origins'),
    AUTHN_LOGOUT_URL: Env.optionalString('an absolute http(s) URL', { pattern: '^https?://.+' }),
    AUTHN_LOGIN_ATTEMPTS_PER_ACCOUNT: Env.integer('failed logins allowed per account before back-off starts', 5, 1),
    AUTHN_LOGIN_ATTEMPTS_PER_IP: Env.integer('failed logins allowed per client address before back-off starts', 100, 1),
    AUTHN_OIDC_PRESET: Env.enumOf(['none', 'orcid', 'orcid-sandbox'] as const, 'none'),
    AUTHN_OIDC_ISSUER: Env.optionalString('the issuer URL of an OpenID Connect provider', { pattern: '^https?://.+' }),
    AUTHN_OIDC_CLIENT_ID: Env.optionalString('the client id registered at the provider'),
    AUTHN_OIDC_CLIENT_SECRET: Env.optionalString('the client secret registered at the provider'),
    AUTHN_OIDC_SCOPES: Env.optionalString('space-separated OAuth scopes (default "openid email profile"; "openid" with an ORCID preset)'),
    AUTHN_OIDC_PERSISTENT_ID_CLAIM: Env.optionalString('the claim that names the person for good (the ORCID iD: "sub" with an ORCID preset)'),
    AUTHN_OIDC_EMAIL_CLAIM: Env.string('the ID token / userinfo claim holding the e-mail', { default: 'email' }),
    AUTHN_OIDC_AUTO_REGISTER: Env.boolean(false),
    AUTHN_OIDC_GROUPS: Env.optionalString('a comma-separated list of group names'),
    AUTHN_OIDC_ALLOW_HTTP: Env.boolean(false),
    AUTHN_PASSKEY_RP_ID: Env.optionalString('a host name such as repo.example.org (enables passkeys)', { pattern: '^[A-Za-z0-9.-]{1,253}$' }),
    AUTHN_PASSKEY_RP_NAME: Env.string('the name a passkey prompt shows', { default: 'DSpace' }),
    AUTHN_PASSKEY_ORIGINS: Env.optionalString('a comma-separated list of origins'),
    AUTHN_SAML_PROVIDERS: Env.optionalString('a JSON array of SAML identity providers (see docs/authn.md)'),
    AUTHN_SAML_BASE_URL: Env.optionalString('the public origin of this server, such as https://repo.example.org', { pattern: '^https?://[^/]+/?$' }),
    AUTHN_SAML_SP_KEY: Env.optionalString('a PEM private key (RSA)'),
    AUTHN_SAML_SP_CERT: Env.optionalString('a PEM certificate of AUTHN_SAML_SP_KEY'),
    AUTHN_SAML_CLOCK_SKEW: Env.duration('30s'),
    AUTHN_SAML_METADATA_REFRESH: Env.duration('1h'),
    AUTHN_SHIBBOLETH: Env.boolean(false),
    AUTHN_SHIBBOLETH_HEADERS: Env.optionalString('"email=mail,givenName=givenName,surname=sn,persistentId=persistent-id,affiliation=affiliation" (any subset)'),
    AUTHN_SHIBBOLETH_AUTO_REGISTER: Env.boolean(false),
    AUTHN_SHIBBOLETH_GROUPS: Env.optionalString('a comma-separated list of group names'),
    AUTHN_SHIBBOLETH_ROLE_GROUPS: Env.optionalString('"affiliation=Group" pairs such as "staff=Staff,student=Students"'),
    AUTHN_SHIBBOLETH_LOGIN_URL: Env.string('the Shibboleth SP login handler, a path or URL', { default: '/Shibboleth.sso/Login' }),
  }),
  (env) => {
    const shortLivedMs = parseDuration(env.AUTHN_SHORT_LIVED_LIFETIME)
    if (shortLivedMs > SHORT_LIVED_MAX_MS || shortLivedMs < 1) throw new Error('AUTHN_SHORT_LIVED_LIFETIME must be between 1ms and 2s')
    const tokenLifetimeMs = parseDuration(env.AUTHN_TOKEN_LIFETIME)
    if (tokenLifetimeMs < 1000) throw new Error('AUTHN_TOKEN_LIFETIME must be at least 1s')
    const preset = OIDC_PRESETS[env.AUTHN_OIDC_PRESET]
    const issuer = env.AUTHN_OIDC_ISSUER ?? preset?.issuer
    const oidcParts = [issuer, env.AUTHN_OIDC_CLIENT_ID, env.AUTHN_OIDC_CLIENT_SECRET]
    if (oidcParts.some(Boolean) && !oidcParts.every(Boolean)) {
      throw new Error(
        preset
          ? `AUTHN_OIDC_PRESET=${env.AUTHN_OIDC_PRESET} needs AUTHN_OIDC_CLIENT_ID and AUTHN_OIDC_CLIENT_SECRET (the ORCID public API client)`
          : 'AUTHN_OIDC_ISSUER, AUTHN_OIDC_CLIENT_ID and AUTHN_OIDC_CLIENT_SECRET must be set together',
      )
    }
    if (env.AUTHN_ADMIN_EMAIL && !env.AUTHN_ADMIN_EMAIL.includes('@')) throw new Error('AUTHN_ADMIN_EMAIL must be an e-mail address')
    if (env.AUTHN_PASSKEY_ORIGINS && !env.AUTHN_PASSKEY_RP_ID) throw new Error('AUTHN_PASSKEY_ORIGINS needs AUTHN_PASSKEY_RP_ID')
    const rpId = env.AUTHN_PASSKEY_RP_ID?.toLowerCase()
    const samlProviders = parseSamlProviders(env.AUTHN_SAML_PROVIDERS)
    if (samlProviders.length > 0 && !env.AUTHN_SAML_BASE_URL) {
      // Entity ids and the assertion consumer URL are checked against each response, so they
      // must not follow a request's Host header.
      throw new Error('AUTHN_SAML_PROVIDERS needs AUTHN_SAML_BASE_URL (the public origin, such as https://repo.example.org)')
    }
    const trustedProxies = parseCidrList('AUTHN_TRUSTED_PROXIES', env.AUTHN_TRUSTED_PROXIES)
    // Headers are credentials only when the Shibboleth SP in front set them; anyone else could too.
    if (env.AUTHN_SHIBBOLETH && trustedProxies.length === 0) throw new Error('AUTHN_SHIBBOLETH needs AUTHN_TRUSTED_PROXIES: the address of the Shibboleth service provider in front')
    if (Boolean(env.AUTHN_SAML_SP_KEY) !== Boolean(env.AUTHN_SAML_SP_CERT)) throw new Error('AUTHN_SAML_SP_KEY and AUTHN_SAML_SP_CERT must be set together')
    return {
      adminEmail: env.AUTHN_ADMIN_EMAIL,
      adminPassword: env.AUTHN_ADMIN_PASSWORD,
      tokenLifetimeMs,
      secret: env.AUTHN_SECRET,
      refreshGraceMs: parseDuration(env.AUTHN_REFRESH_GRACE),
      sessionMaxAgeMs: parseDuration(env.AUTHN_SESSION_MAX_AGE),
      shortLivedLifetimeMs: shortLivedMs,
      revocationCacheMs: parseDuration(env.AUTHN_REVOCATION_CACHE),
      realm: env.AUTHN_REALM,
      csrfCookiePrefix: env.AUTHN_CSRF_COOKIE_PREFIX,
      loginAs: env.AUTHN_LOGIN_AS,
      ipGroups: parseIpGroups(env.AUTHN_IP_GROUPS),
      trustedProxies,
      passwordGroups: splitList(env.AUTHN_PASSWORD_GROUPS),
      allowedOrigins: parseOrigins('AUTHN_ALLOWED_ORIGINS', env.AUTHN_ALLOWED_ORIGINS),
      logoutUrl: env.AUTHN_LOGOUT_URL,
      loginAttemptsPerAccount: env.AUTHN_LOGIN_ATTEMPTS_PER_ACCOUNT,
      loginAttemptsPerIp: env.AUTHN_LOGIN_ATTEMPTS_PER_IP,
      oidc: issuer
        ? {
            issuer,
            clientId: env.AUTHN_OIDC_CLIENT_ID ?? '',
            clientSecret: env.AUTHN_OIDC_CLIENT_SECRET ?? '',
            scopes: env.AUTHN_OIDC_SCOPES ?? preset?.scopes ?? 'openid email profile',
            persistentIdClaim: env.AUTHN_OIDC_PERSISTENT_ID_CLAIM ?? preset?.persistentIdClaim,
            emailClaim: env.AUTHN_OIDC_EMAIL_CLAIM,
            autoRegister: env.AUTHN_OIDC_AUTO_REGISTER,
            groups: splitList(env.AUTHN_OIDC_GROUPS),
            allowHttp: env.AUTHN_OIDC_ALLOW_HTTP,
          }
        : undefined,
      saml:
        samlProviders.length > 0 && env.AUTHN_SAML_BASE_URL
          ? {
              providers: samlProviders,
              baseUrl: new URL(env.AUTHN_SAML_BASE_URL).origin,
              spKey: env.AUTHN_SAML_SP_KEY ? pemFromEnv(env.AUTHN_SAML_SP_KEY) : undefined,
              spCert: env.AUTHN_SAML_SP_CERT ? pemFromEnv(env.AUTHN_SAML_SP_CERT) : undefined,
              clockSkewMs: parseDuration(env.AUTHN_SAML_CLOCK_SKEW),
              metadataRefreshMs: parseDuration(env.AUTHN_SAML_METADATA_REFRESH),
            }
          : undefined,
      shibboleth: env.AUTHN_SHIBBOLETH
        ? {
            headers: parseShibbolethHeaders(env.AUTHN_SHIBBOLETH_HEADERS),
            autoRegister: env.AUTHN_SHIBBOLETH_AUTO_REGISTER,
            groups: splitList(env.AUTHN_SHIBBOLETH_GROUPS),
            roleGroups: parseRoleGroups(env.AUTHN_SHIBBOLETH_ROLE_GROUPS),
            loginUrl: env.AUTHN_SHIBBOLETH_LOGIN_URL,
          }
        : undefined,
      passkeys: rpId ? { rpId, rpName: env.AUTHN_PASSKEY_RP_NAME, origins: parsePasskeyOrigins(env.AUTHN_PASSKEY_ORIGINS, rpId) } : undefined,
    }
  },
)

export type AuthnConfig = ReturnType<typeof authnSection.build>
