import { createHmac } from 'node:crypto'
import type { Clock } from '../../../../core/clock.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import { generateSecretToken, hashSecretToken, safeEqual } from '../../../../core/security/secret-token.ts'
import type { CallingApp, KeyAuthenticator, SessionAuthenticator, SessionPrincipal } from '../../http/auth.ts'
import type { PaymentsDb } from '../../tables.ts'
import * as repo from './dashboard.repository.ts'

/** A merchant user, as a dashboard session names them. */
export interface DashboardUser {
  id: string
  email: string
}

/** Signed in either as an app (with its key: operators) or as a merchant user (e-mailed link). */
interface DashboardSession {
  app?: { id: string; name?: string }
  user?: DashboardUser
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
 * Sign-in to the merchant dashboard, with an app's API key (operators; docs/decisions.md says
 * why the key) or as a merchant user (`startUserSession`, after an e-mailed link: sign-in-links.ts).
 * Either way the browser then holds a random session token in an HttpOnly cookie; sessions
 * live in the database, so every instance knows them. Both kinds share the cookie, the CSRF
 * token and the sign-out: the token is looked up among the app sessions, then the user sessions.
 */
export function createDashboardService(deps: { db: PaymentsDb; clock: Clock; apps: KeyAuthenticator; ttlMs: number }) {
  const now = () => deps.clock.now().toISOString()
  const expiry = () => new Date(deps.clock.now().getTime() + deps.ttlMs).toISOString()

  function describeApp(app: CallingApp, expires: string, token: string): DashboardSession {
    return { app: { id: app.id, ...(app.name === null ? {} : { name: app.name }) }, expires, csrfToken: csrfTokenOf(token) }
  }

  function describeUser(user: DashboardUser, expires: string, token: string): DashboardSession {
    return { user: { id: user.id, email: user.email }, expires, csrfToken: csrfTokenOf(token) }
  }

  /** The session of a token and who it signs in as, or undefined when there is none (or it ended). */
  async function find(token: string): Promise<{ session: DashboardSession; principal: SessionPrincipal } | undefined> {
    const tokenHash = hashSecretToken(token)
    const app = await repo.findSessionApp(deps.db, tokenHash, now())
    if (app) {
      const member = { id: app.id, name: app.name, created: app.created }
      return { session: describeApp(member, app.expires, token), principal: { member, actor: { type: 'app', id: app.id } } }
    }
    const user = await repo.findSessionUser(deps.db, tokenHash, now())
    if (!user) return undefined
    return {
      session: describeUser(user, user.expires, token),
      principal: { member: { id: user.id, name: user.email, created: user.created }, actor: { type: 'user', id: user.id, email: user.email } },
    }
  }

  const sessions: SessionAuthenticator & {
    signIn(key: string): Promise<{ token: string; session: DashboardSession }>
    startUserSession(user: DashboardUser): Promise<{ token: string; session: DashboardSession }>
    current(token: string | undefined): Promise<DashboardSession>
    signOut(token: string | undefined): Promise<void>
  } = {
    async signIn(key) {
      const app = await deps.apps.authenticate(key)
      if (!app) throw coreError('unauthorized', 'Unknown API key')
      const token = generateSecretToken(32)
      const created = now()
      const expires = expiry()
      await repo.deleteExpiredSessionsOfApp(deps.db, app.id, created)
      await repo.insertSession(deps.db, { token_hash: hashSecretToken(token), app_id: app.id, created, expires })
      return { token, session: describeApp(app, expires, token) }
    },

    async startUserSession(user) {
      const token = generateSecretToken(32)
      const expires = expiry()
      await repo.insertUserSession(deps.db, { token_hash: hashSecretToken(token), user_id: user.id, created: now(), expires })
      return { token, session: describeUser(user, expires, token) }
    },

    async current(token) {
      const found = token ? await find(token) : undefined
      if (!found) throw coreError('unauthorized', 'Not signed in to the dashboard')
      return found.session
    },

    async signOut(token) {
      if (!token) return
      const tokenHash = hashSecretToken(token)
      await repo.deleteSession(deps.db, tokenHash)
      await repo.deleteUserSession(deps.db, tokenHash)
    },

    async authenticate(token) {
      return (await find(token))?.principal
    },

    csrfMatches: (token, header) => safeEqual(header, csrfTokenOf(token)),
  }
  return sessions
}

export type DashboardService = ReturnType<typeof createDashboardService>
