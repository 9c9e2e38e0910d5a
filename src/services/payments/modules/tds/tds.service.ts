import { safeEqual } from '../../../../core/security/secret-token.ts'
import type { PaymentsContext } from '../../context.ts'
import { type Locale, pickLocale } from '../../http/locale.ts'
import type { VaultService } from '../vault/index.ts'
import { challengeCode, type FrameData, openFrameData, openTries, signHint, signTries } from './tds.signing.ts'

/** How many wrong one-time codes a challenge takes before it fails (the third wrong one ends it). */
const MAX_WRONG_CODES = 3

/** What a frame shows: the challenge (again), hints for the paying page, or "invalid or expired". */
export type FrameOutcome =
  | { kind: 'invalid'; locale: Locale }
  | { kind: 'silent'; locale: Locale }
  | { kind: 'hints'; locale: Locale; message: 'collected' | 'confirmed' | 'notConfirmed' | 'failed'; hints: string[]; origin: string }
  | {
      kind: 'challenge'
      locale: Locale
      creq: string
      tries: string
      code: string
      data: FrameData
      /** Wrong codes left, after a wrong code. */
      left?: number
    }

export interface ChallengeAnswer {
  creq: string
  tries: string
  code: string
  decision: string | undefined
}

/**
 * The simulated issuer behind the 3-D Secure frames (test mode). Stateless like the rest of
 * the loop: what a frame needs travels in the signed fields the challenge responses handed out,
 * and the count of wrong codes travels signed in the challenge form.
 */
export function createTdsFramesService(ctx: PaymentsContext, vault: VaultService) {
  const maxAge = ctx.config.vaultTokenTtlMs
  /** The page's language (signed into the frame data) wins over the frame request's own. */
  const localeOf = (data: FrameData | undefined, acceptLanguage: string | undefined) => pickLocale(data?.lang, acceptLanguage)

  return {
    async fingerprint(methodData: string, acceptLanguage: string | undefined): Promise<FrameOutcome> {
      const sealer = await vault.sealer()
      const now = ctx.clock.now()
      const data = openFrameData(sealer, 'tds-method', methodData, now, maxAge)
      const locale = localeOf(data, acceptLanguage)
      if (!data) return { kind: 'invalid', locale }
      if (data.mode === 'timeout') return { kind: 'silent', locale }
      return { kind: 'hints', locale, message: 'collected', hints: [signHint(sealer, 'tds-fp-done', data.p, now)], origin: data.o }
    },

    async challenge(creq: string, acceptLanguage: string | undefined): Promise<FrameOutcome> {
      const sealer = await vault.sealer()
      const data = openFrameData(sealer, 'tds-creq', creq, ctx.clock.now(), maxAge)
      const locale = localeOf(data, acceptLanguage)
      if (!data) return { kind: 'invalid', locale }
      return { kind: 'challenge', locale, creq, tries: signTries(sealer, creq, 0), code: challengeCode(sealer, creq), data }
    },

    /**
     * Approve with the right code → the approval proof. Reject → the rejection proof. A wrong
     * code asks again with the error, until the third wrong one, which fails the challenge.
     */
    async answer(answer: ChallengeAnswer, acceptLanguage: string | undefined): Promise<FrameOutcome> {
      const sealer = await vault.sealer()
      const now = ctx.clock.now()
      const data = openFrameData(sealer, 'tds-creq', answer.creq, now, maxAge)
      const locale = localeOf(data, acceptLanguage)
      const wrong = data && openTries(sealer, answer.creq, answer.tries)
      if (!data || wrong === undefined || wrong >= MAX_WRONG_CODES) return { kind: 'invalid', locale }
      const proof = (kind: 'tds-challenge-approved' | 'tds-challenge-rejected' | 'tds-challenge-failed') => [signHint(sealer, kind, data.p, now)]
      if (answer.decision === 'reject') {
        ctx.metrics.tdsChallenge('rejected')
        return { kind: 'hints', locale, message: 'notConfirmed', hints: proof('tds-challenge-rejected'), origin: data.o }
      }
      const expected = challengeCode(sealer, answer.creq)
      if (safeEqual(answer.code.trim(), expected)) {
        ctx.metrics.tdsChallenge('approved')
        return { kind: 'hints', locale, message: 'confirmed', hints: proof('tds-challenge-approved'), origin: data.o }
      }
      const count = wrong + 1
      if (count >= MAX_WRONG_CODES) {
        ctx.metrics.tdsChallenge('failed')
        return { kind: 'hints', locale, message: 'failed', hints: proof('tds-challenge-failed'), origin: data.o }
      }
      ctx.metrics.tdsChallenge('wrong_code')
      return { kind: 'challenge', locale, creq: answer.creq, tries: signTries(sealer, answer.creq, count), code: expected, data, left: MAX_WRONG_CODES - count }
    },
  }
}

