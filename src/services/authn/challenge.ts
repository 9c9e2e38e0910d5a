import type { FastifyRequest } from 'fastify'
import { apiBase } from './context.ts'

/**
 * The `WWW-Authenticate` value listing every enabled scheme, in DSpace's format
 * (`password realm="…"`, the federated ones — OIDC, SAML — and the passkey one with `location="…"`), joined by ", ".
 * dspace-angular parses it to build its login options.
 */
export function createChallenge(options: { realm: string; oidcEnabled: boolean; passkeysEnabled?: boolean; samlLocations?: readonly string[]; shibbolethLoginUrl?: string }) {
  const realm = `realm="${options.realm.replaceAll('"', '')}"`
  return (request: FastifyRequest): string => {
    const schemes = [`password ${realm}`]
    if (options.oidcEnabled) schemes.push(`oidc ${realm}, location="${apiBase(request)}/authn/oidc"`)
    // DSpace's `saml` scheme, one per identity provider, each at its authenticate URL.
    for (const location of options.samlLocations ?? []) schemes.push(`saml ${realm}, location="${location}"`)
    if (options.shibbolethLoginUrl !== undefined) {
      // DSpace's form: the Shibboleth SP's login handler, whose target is the route that reads its headers.
      const handler = options.shibbolethLoginUrl.startsWith('/') ? `${request.protocol}://${request.host}${options.shibbolethLoginUrl}` : options.shibbolethLoginUrl
      schemes.push(`shibboleth ${realm}, location="${handler}?target=${encodeURIComponent(`${apiBase(request)}/authn/shibboleth`)}"`)
    }
    // Where a passkey login starts (POST: the WebAuthn request options).
    if (options.passkeysEnabled) schemes.push(`passkey ${realm}, location="${apiBase(request)}/authn/passkeys/login/options"`)
    return schemes.join(', ')
  }
}

export type Challenge = ReturnType<typeof createChallenge>
