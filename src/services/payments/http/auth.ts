import type { FastifyRequest } from 'fastify'
import { coreError } from '../../../core/errors/codes.ts'

/** The calling app, as the routes see it (the apps module's AppRow satisfies it). */
export interface CallingApp {
  id: string
  name: string | null
  created: string
}

/** What the hook needs of the apps module: a key's app. Declared here, so http/ imports no module. */
export interface KeyAuthenticator {
  authenticate(key: string): Promise<CallingApp | undefined>
}

const authenticated = new WeakMap<FastifyRequest, CallingApp>()

/**
 * HTTP Basic with an empty user name and the API key as the password (Paylike's scheme). A
 * client that puts the key in the user name instead is accepted too: the key is the secret
 * either way.
 */
export function keyFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header)
  if (!match) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  const user = decoded.slice(0, colon)
  const password = decoded.slice(colon + 1)
  const key = password || user
  return key.length > 0 && key.length <= 200 ? key : undefined
}

/** An `onRequest` hook: every route that is not marked public needs a known key (else 401). */
export function authHook(apps: KeyAuthenticator) {
  return async (request: FastifyRequest) => {
    if ((request.routeOptions.config as { public?: boolean } | undefined)?.public) return
    const key = keyFromAuthorization(request.headers.authorization)
    if (key === undefined)
      throw coreError('unauthorized', 'Authenticate with HTTP Basic: an empty user name and the API key as the password', {
        headers: { 'www-authenticate': 'Basic realm="payments"' },
      })
    const app = await apps.authenticate(key)
    if (!app) throw coreError('unauthorized', 'Unknown API key', { headers: { 'www-authenticate': 'Basic realm="payments"' } })
    authenticated.set(request, app)
  }
}

/** The app that made this (authenticated) request. */
export function currentApp(request: FastifyRequest): CallingApp {
  const app = authenticated.get(request)
  if (!app) throw coreError('unauthorized', 'Not authenticated')
  return app
}
