import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../../../core/clock.ts'
import { coreError } from '../../../../core/errors/codes.ts'
import type { RateLimiter } from '../../../../core/http/rate-limit.ts'
import { generateSecretToken, hashSecretToken } from '../../../../core/security/secret-token.ts'
import type { Locale } from '../../http/locale.ts'
import type { Mailer } from '../../mail/mailer.port.ts'
import type { PaymentsDb } from '../../tables.ts'
import * as repo from './dashboard.repository.ts'
import type { DashboardService } from './dashboard.service.ts'
import { signInMail } from './sign-in-mail.ts'

interface LinkRequest {
  email: string
  /** The client's address, for the per-address limit. */
  ip: string
  /** Where the dashboard is, e.g. https://pay.example.com (the link goes to its /dashboard). */
  baseUrl: string
  locale: Locale
}

/**
 * Merchant users sign in to the dashboard with a one-time link sent by e-mail (issue 30). The
 * answer to a request never says whether the address belongs to a user: the same reply, and
 * the work that differs (looking the user up, storing the link, sending the e-mail) is done
 * after the reply, so neither its words nor its time tell. Requests are limited per address
 * and per e-mail, counted before anything is looked up. A link works once, for `ttlMs`, for
 * the user it was sent to while they are still a member of some merchant.
 */
export function createSignInLinks(deps: {
  db: PaymentsDb
  clock: Clock
  mailer: Mailer
  log: FastifyBaseLogger
  sessions: DashboardService
  ttlMs: number
  /** Either may be absent: no limit (its setting is 0). */
  limits: { perEmail: RateLimiter | undefined; perIp: RateLimiter | undefined }
}) {
  const sending = new Set<Promise<void>>()

  async function send(request: LinkRequest): Promise<void> {
    const user = await repo.findMemberUserByEmail(deps.db, request.email)
    if (!user) return
    const token = generateSecretToken(32)
    const created = deps.clock.now()
    await repo.deleteExpiredOfUser(deps.db, user.id, created.toISOString())
    await repo.insertLink(deps.db, {
      token_hash: hashSecretToken(token),
      user_id: user.id,
      created: created.toISOString(),
      expires: new Date(created.getTime() + deps.ttlMs).toISOString(),
      used: null,
    })
    // The token is in the fragment: browsers send no fragment to the server or in a Referer.
    const link = `${request.baseUrl}/dashboard?lang=${request.locale}#sign-in=${token}`
    await deps.mailer.send({ to: user.email, ...signInMail(request.locale, link, Math.round(deps.ttlMs / 60_000)) })
  }

  return {
    /** Counts the request against both limits (429 past either), then sends a link if the e-mail is a merchant user's. */
    async request(request: LinkRequest): Promise<void> {
      const email = request.email.trim().toLowerCase()
      for (const [limiter, key] of [
        [deps.limits.perIp, `ip:${request.ip}`],
        [deps.limits.perEmail, `email:${hashSecretToken(email)}`],
      ] as const) {
        const result = await limiter?.hit(key)
        if (result && !result.allowed)
          throw coreError('rate_limited', `Too many sign-in links asked for; retry in ${result.resetSeconds} s`, {
            headers: { 'retry-after': String(result.resetSeconds) },
          })
      }
      const sent = send({ ...request, email })
        .catch((error: unknown) => deps.log.error({ err: error }, 'dashboard sign-in link could not be sent'))
        .finally(() => sending.delete(sent))
      sending.add(sent)
    },

    /** Follows a link: a new session for its user, or 401 for an unknown, used or expired link, or a user no longer a member. */
    async follow(token: string) {
      const user = await repo.useLink(deps.db, hashSecretToken(token), deps.clock.now().toISOString())
      if (!user) throw coreError('unauthorized', 'This sign-in link is not valid: it was used, it expired, or its user has no merchant any more. Ask for a new one.')
      return deps.sessions.startUserSession(user)
    },

    /** Resolves when the links being sent have been (at close, and for tests reading the outbox). */
    async settled(): Promise<void> {
      await Promise.all([...sending])
    },
  }
}

export type SignInLinks = ReturnType<typeof createSignInLinks>
