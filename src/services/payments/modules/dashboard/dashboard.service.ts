import { createHmac } from 'node:crypto'
import type { Clock } from '../../../../core/clock.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import { generateSecretToken, hashSecretToken, safeEqual } from '../../../../core/security/secret-token.ts'
import type { CallingApp, KeyAuthenticator, SessionAuthenticator } from '../../http/auth.ts'
import type { PaymentsDb } from '../../tables.ts'
import * as repo from './dashboard.repository.ts'

interface DashboardSession {
  app: { id: string; name?: string }
  expires: string
  /** Sent back in X-CSRF-Token on every state-changing call; kept in the page's memory only. */
  csrfToken: string
}

/**
 * The CSRF token of a session: an HMAC of a fixed purpose under the session token. It is
 * stored nowhere, reveals nothing of the token, and any instance can check it.
 */
function csrfTokenOf(token: string): string {
  return createHmac('sha256', token).update('payments-dashboard-csrf').digest('base64url')
}

/**
 * Sign-in to the merchant dashboard with an app's API key (docs/decisions.md says why the key):
 * the key is checked once, and the browser then holds a random session token in an HttpOnly
 * cookie instead of the key. Sessions live in the database, so every instance knows them.
 */
export function createDashboardService(deps: { db: PaymentsDb; clock: Clock; apps: KeyAuthenticator; ttlMs: number }) {
  const now = () => deps.clock.now().toISOString()

  function describe(app: CallingApp, expires: string, token: string): DashboardSession {
    return { app: { id: app.id, ...(app.name === null ? {} : { name: app.name }) }, expires, csrfToken: csrfTokenOf(token) }
  }

  const sessions: SessionAuthenticator & {
    signIn(key: string): Promise<{ token: string; session: DashboardSession }>
    current(token: string | undefined): Promise<DashboardSession>
    signOut(token: string | undefined): Promise<void>
  } = {
    async signIn(key) {
      const app = await deps.apps.authenticate(key)
      if (!app) throw coreError('unauthorized', 'Unknown API key')
      const token = generateSecretToken(32)
      const created = now()
      const expires = new Date(deps.clock.now().getTime() + deps.ttlMs).toISOString()
      await repo.deleteExpiredSessionsOfApp(deps.db, app.id, created)
      await repo.insertSession(deps.db, { token_hash: hashSecretToken(token), app_id: app.id, created, expires })
      return { token, session: describe(app, expires, token) }
    },

    async current(token) {
      const found = token ? await repo.findSessionApp(deps.db, hashSecretToken(token), now()) : undefined
      if (!token || !found) throw coreError('unauthorized', 'Not signed in to the dashboard')
      return describe(found, found.expires, token)
    },

    async signOut(token) {
      if (token) await repo.deleteSession(deps.db, hashSecretToken(token))
    },

    async authenticate(token) {
      const found = await repo.findSessionApp(deps.db, hashSecretToken(token), now())
      return found ? { id: found.id, name: found.name, created: found.created } : undefined
    },

    csrfMatches: (token, header) => safeEqual(header, csrfTokenOf(token)),
  }
  return sessions
}

export type DashboardService = ReturnType<typeof createDashboardService>
