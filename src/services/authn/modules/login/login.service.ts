import { verifyPassword } from '../../../../core/security/password.ts'
import type { AuthnContext } from '../auth-context/index.ts'
import type { HandoffService } from '../handoffs/index.ts'
import { authnErrors } from '../../errors.ts'
import { type EpersonsService, normalizeEmail } from '../epersons/index.ts'
import type { LoginClient, TokenService } from '../sessions/index.ts'
import type { SpecialGroupsService } from '../special-groups/index.ts'
import type { ThrottleService } from '../throttle/index.ts'
import { type AuthnMetrics, noAuthnMetrics } from '../../metrics.ts'

export function createLoginService(deps: {
  tokens: TokenService
  epersons: EpersonsService
  specialGroups: SpecialGroupsService
  throttle: ThrottleService
  handoffs: HandoffService
  metrics?: AuthnMetrics
}) {
  const { tokens, epersons, specialGroups, throttle } = deps
  const metrics = deps.metrics ?? noAuthnMetrics

  /** Starts a session for an eperson whose credentials a login method has just checked (password, hand-off, passkey). */
  async function signIn(epersonUuid: string, method: string, client: LoginClient, extraGroups: readonly string[] = []): Promise<string> {
    await epersons.touchLastActive(epersonUuid)
    const groups = [...new Set([...specialGroups.forMethod(method), ...extraGroups])]
    const token = await tokens.startSession({ epersonUuid, method, specialGroups: groups, client })
    metrics.login(method, 'success')
    return token
  }

  /**
   * The end of a login whose credential (an OIDC hand-off, a passkey) named `epersonUuid`, or
   * nobody: a session if the account may log in, else the one 401 every failed login gets.
   */
  async function verifiedLogin(epersonUuid: string | undefined, method: string, client: LoginClient, challenge: string, extraGroups?: readonly string[]): Promise<string> {
    const eperson = epersonUuid === undefined ? undefined : await epersons.findByUuid(epersonUuid)
    if (eperson?.can_log_in !== 1) {
      metrics.login(method, 'failure')
      throw authnErrors.authenticationFailed(challenge)
    }
    return signIn(eperson.uuid, method, client, extraGroups)
  }

  return {
    /**
     * Password login. Every failure (unknown user, wrong password, disabled account) runs one
     * argon2 verification and returns the same 401, so neither the answer nor its timing tells
     * them apart. Throttling happens first and does not reveal whether the account exists either.
     */
    async passwordLogin(input: { user: string; password: string; client: LoginClient; challenge: string }): Promise<string> {
      const email = normalizeEmail(input.user)
      const wait = await throttle.retryAfterSeconds(email, input.client.address)
      if (wait > 0) {
        metrics.login('password', 'throttled')
        throw authnErrors.tooManyAttempts(wait)
      }
      const credentials = email ? await epersons.findCredentials(email) : undefined
      const passwordOk = await verifyPassword(input.password, credentials?.password_hash)
      if (!credentials || !passwordOk || credentials.can_log_in !== 1) {
        metrics.login('password', 'failure')
        await throttle.recordFailure(email, input.client.address)
        throw authnErrors.authenticationFailed(input.challenge)
      }
      await throttle.recordSuccess(email)
      return signIn(credentials.uuid, 'password', input.client)
    },


    /** A new token for the session of the presented one (see TokenService.refresh). */
    async refresh(context: AuthnContext, challenge: string): Promise<string> {
      if (context.realEperson) throw authnErrors.accessDenied('A token cannot be refreshed while acting on behalf of another user')
      if (context.tokenKind === 'personal') throw authnErrors.accessDenied('A personal access token cannot be refreshed or exchanged for a login token')
      if (context.tokenKind !== 'login' || !context.claims) throw authnErrors.authenticationFailed(challenge)
      const token = await tokens.refresh(context.claims)
      if (!token) throw authnErrors.authenticationFailed(challenge)
      await epersons.touchLastActive(context.claims.eid)
      return token
    },

    /** The second half of a federated login: the hand-off cookie becomes a token. */
    async exchangeHandoff(code: string, client: LoginClient, challenge: string): Promise<string> {
      const handoff = await deps.handoffs.consume(code)
      return verifiedLogin(handoff?.epersonUuid, handoff?.method ?? 'oidc', client, challenge, handoff?.specialGroups)
    },

    verifiedLogin,

    async logout(bearer: string | undefined): Promise<void> {
      if (!bearer) return
      const validated = await tokens.validateLoginToken(bearer)
      if (validated) await tokens.revokeAll(validated.claims.eid)
    },
  }
}

export type LoginService = ReturnType<typeof createLoginService>
