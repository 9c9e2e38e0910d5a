import { createHash } from 'node:crypto'
import { currencyExponent, isCurrencyCode, toMinorUnits } from '../../../../core/money.ts'
import { cutText } from '../../../../core/text.ts'
import type { PaymentsContext } from '../../context.ts'
import type { ProcessingErrorCode } from '../../http/errors.ts'
import type { CardProcessor } from '../../processors/card-processor.port.ts'
import type { SandboxCardsTable } from '../../tables.ts'
import { hasRate } from '../../money/fx.ts'
import { type ClientMerchant, createMerchantDirectory } from '../merchants/index.ts'
import { type HintKind, signFrameData, signHint, verifyHints } from '../tds/index.ts'
import { cardExpiry, recordTransaction } from '../transactions/index.ts'
import { luhnValid, schemeOf, type SchemeName, type Sealer, TEST_CARD_NUMBERS, type VaultService } from '../vault/index.ts'
import { clientErrors } from '../../http/client-errors.ts'
import type { RequestSite } from '../../http/request-site.ts'
import type { ChallengeResponse, MoneyInput, PaymentBody, PaymentResponse, TestScenario } from './client-payments.schemas.ts'

type SandboxState = Partial<Omit<SandboxCardsTable, 'card_ref' | 'updated'>>
type SandboxProcessor = CardProcessor & { setCardState(ref: string, state: SandboxState): Promise<void> }

const CHALLENGES = {
  'tds-fingerprint': { name: 'tds-fingerprint', type: 'background-iframe', path: '/payments/challenges/tds-fingerprint' },
  'tds-challenge': { name: 'tds-challenge', type: 'iframe', path: '/payments/challenges/tds-challenge' },
} as const
type ChallengeName = keyof typeof CHALLENGES

const FINGERPRINT_TIMEOUT_MS = 10_000
const DESCRIPTOR = /^[\x20-\x7E]{2,}$/

/** A payment request, checked and resolved: the merchant, the amount, the opened tokens and the card. */
interface CheckedPayment {
  merchant: ClientMerchant
  test: TestScenario | undefined
  amount: number
  currency: string
  numberToken: { hash: string; expires: string; path: string }
  codeToken: { hash: string; expires: string; path: string } | undefined
  card: { number: string; bin: string; last4: string; scheme: SchemeName; expiry: string }
  fingerprint: string
  proven: Set<HintKind>
}

/**
 * The client payment API (Paylike's `POST /payments`): the merchant is named by its public
 * key, card data arrives as vault tokens, and the answer is either challenges to complete or
 * the final `{authorizationId}`. In test mode 3-D Secure is simulated with real frames
 * (modules/tds); the `test` object decides every outcome. Rules in the order the real API
 * applies them: version, body, key, test mode, amount, tokens, card scheme, 3-D Secure, then
 * the acquirer (outside any database transaction) and the transaction record.
 */
export function createClientPaymentsService(ctx: PaymentsContext, vault: VaultService) {
  const merchants = createMerchantDirectory(ctx.database)
  async function check(body: PaymentBody, sealer: Sealer): Promise<CheckedPayment> {
    const merchant = await merchants.byKey(body.integration.key)
    if (!merchant) throw clientErrors.integrationKeyUnknown()
    if (merchant.test === 1 && body.test === undefined)
      throw clientErrors.testModeMixed('the merchant is in test mode, so the payment needs a `test` object (it may be {})')
    if (merchant.test === 0 && body.test !== undefined) throw clientErrors.testModeMixed('the merchant is live, so the payment must not carry a `test` object')
    // A card number sealed under a key that sits beside the database is as good as unencrypted.
    if (merchant.test === 0 && !vault.liveReady()) throw clientErrors.integrationDisabled()
    const test = body.test

    const { amount, currency } = minorAmount(body.amount, merchant.currency, 'amount')
    if (!hasRate(ctx.fx, currency)) throw clientErrors.requestInvalid(`payments in ${currency} are not supported`)

    const numberToken = await vault.redeem(tokenOf(body.card.number), 'pcn', 'card.number')
    const codeToken = body.card.code === undefined ? undefined : await vault.redeem(tokenOf(body.card.code), 'pcsc', 'card.code')
    const number = numberToken.value

    let scheme: SchemeName
    if (test?.card?.scheme === 'unsupported') throw clientErrors.schemeUnsupported(unsupportedSchemeName(number))
    if (test?.card?.scheme === 'unknown') throw clientErrors.schemeUnknown()
    if (TEST_CARD_NUMBERS.has(number) && !luhnValid(number)) {
      // Paylike's documented test numbers are no real cards: test mode only, and Visa there.
      if (!test) throw clientErrors.cardNumberInvalid()
      scheme = 'visa'
    } else {
      const found = schemeOf(number)
      if (!found.supported) throw found.name === undefined ? clientErrors.schemeUnknown() : clientErrors.schemeUnsupported(found.name)
      scheme = found.scheme
    }

    const fingerprint = paymentFingerprint(body)
    return {
      merchant,
      test,
      amount,
      currency,
      numberToken: { hash: numberToken.hash, expires: numberToken.expires, path: 'card.number' },
      codeToken: codeToken && { hash: codeToken.hash, expires: codeToken.expires, path: 'card.code' },
      card: { number, bin: number.slice(0, 6), last4: number.slice(-4), scheme, expiry: cardExpiry(body.card.expiry.year, body.card.expiry.month) },
      fingerprint,
      proven: verifyHints(sealer, body.hints ?? [], fingerprint, ctx.clock.now(), ctx.config.vaultTokenTtlMs),
    }
  }

  /** The challenge still to complete, or undefined when the payment can be authorized. */
  function nextChallenge(payment: CheckedPayment): ChallengeName | undefined {
    if (payment.merchant.test === 0) return undefined
    const tds = payment.test?.tds ?? {}
    const fingerprint = tds.fingerprint ?? 'success'
    if (fingerprint !== 'unavailable' && !payment.proven.has('tds-fp-start')) return 'tds-fingerprint'
    if (payment.proven.has('tds-challenge-rejected') || payment.proven.has('tds-challenge-failed')) return undefined
    // An issuer whose fingerprint answered decides frictionless only on that answer: the frame's
    // own proof, signed for this payment. Without it (the frame never reported back, or a hint
    // that is not this payment's) it challenges, as an EMV 3-D Secure issuer does when the 3DS
    // Method did not complete. An issuer that never answers (`timeout`) is not waited for.
    const frictionless = tds.challenge === false && (fingerprint !== 'success' || payment.proven.has('tds-fp-done'))
    if (!frictionless && !payment.proven.has('tds-challenge-approved')) return 'tds-challenge'
    return undefined
  }

  /** The 3-D Secure outcome of a test payment once its challenges are done. */
  function tdsOutcome(payment: CheckedPayment): 'full' | 'attempt' | null {
    if (payment.merchant.test === 0) return null
    if (payment.proven.has('tds-challenge-rejected')) throw clientErrors.tdsFailed('rejected')
    if (payment.proven.has('tds-challenge-failed')) throw clientErrors.tdsFailed('failed')
    const status = payment.test?.tds?.status ?? 'authenticated'
    if (status === 'rejected') throw clientErrors.tdsFailed('issuer')
    const outcome = status === 'authenticated' ? 'full' : 'attempt'
    if (outcome === 'attempt' && payment.merchant.tds_mode === 'full') throw clientErrors.tdsRequired()
    return outcome
  }

  async function authorize(body: PaymentBody, payment: CheckedPayment): Promise<string> {
    const tds = tdsOutcome(payment)
    const scenario = payment.test?.card
    if (scenario?.code === 'invalid') throw clientErrors.securityCodeInvalid()
    const sandboxState = scenario ? sandboxStateOf(scenario) : undefined

    // Spent first, all or none: a second request racing with the same tokens stops here.
    const tokens = payment.codeToken ? [payment.numberToken, payment.codeToken] : [payment.numberToken]
    const ref = await vault.spendAndStoreCard(tokens, payment.card.number)
    const processor = ctx.processor as Partial<SandboxProcessor>
    if (payment.merchant.test === 1 && sandboxState && typeof processor.setCardState === 'function') {
      await processor.setCardState(ref, sandboxState)
    }
    const descriptor = descriptorOf(body.text) ?? payment.merchant.descriptor
    const card = { ref, bin: payment.card.bin, last4: payment.card.last4, expiry: payment.card.expiry, scheme: payment.card.scheme }
    const result = await ctx.processor.authorize({
      merchant: { id: payment.merchant.id, test: payment.merchant.test === 1, descriptor: payment.merchant.descriptor },
      card,
      amount: payment.amount,
      currency: payment.currency,
      descriptor,
      recurring: false,
    })
    if (!result.approved) {
      // No transaction will ever refer to this card: keep no card number for it.
      await vault.forgetCard(ref)
      throw declineError(result.code, scenario?.status, result.message)
    }
    const row = await recordTransaction(ctx, {
      merchant: { id: payment.merchant.id, test: payment.merchant.test, descriptor: payment.merchant.descriptor },
      amount: payment.amount,
      currency: payment.currency,
      descriptor,
      card: { ...card, codePresent: payment.codeToken !== undefined },
      custom: body.custom,
      text: body.text,
      tds,
      recurring: false,
    })
    return row.id
  }

  return {
    /** `POST /payments`: the next challenges, or the authorization. */
    async pay(body: PaymentBody): Promise<PaymentResponse> {
      const payment = await check(body, await vault.sealer())
      const next = nextChallenge(payment)
      if (next) return { challenges: [{ ...CHALLENGES[next] }] }
      const id = await authorize(body, payment)
      return { authorizationId: id, transactionId: id }
    },

    /** `POST /payments/challenges/:name`: what the client needs to complete that challenge. */
    async challenge(name: string, body: PaymentBody, site: RequestSite): Promise<ChallengeResponse> {
      const sealer = await vault.sealer()
      const payment = await check(body, sealer)
      const next = nextChallenge(payment)
      if (next === undefined || next !== name) throw clientErrors.challengeUnavailable()
      const now = ctx.clock.now()
      const frame = { p: payment.fingerprint, o: site.origin ?? '*', t: now.getTime() }
      if (next === 'tds-fingerprint') {
        return {
          action: `${site.baseUrl}/payments/tds/fingerprint`,
          method: 'POST',
          fields: { threeDSMethodData: signFrameData(sealer, 'tds-method', { ...frame, mode: payment.test?.tds?.fingerprint ?? 'success' }) },
          timeout: FINGERPRINT_TIMEOUT_MS,
          hints: [signHint(sealer, 'tds-fp-start', payment.fingerprint, now)],
        }
      }
      const creq = signFrameData(sealer, 'tds-creq', {
        ...frame,
        amount: { minor: payment.amount, currency: payment.currency, exponent: currencyExponent(payment.currency) ?? 2 },
        lang: site.language === undefined ? undefined : cutText(site.language, 64),
        merchant: payment.merchant.name ?? payment.merchant.descriptor,
        mode: `${payment.card.scheme}:${payment.card.last4}`,
      })
      return { action: `${site.baseUrl}/payments/tds/challenge`, method: 'POST', fields: { creq }, width: 390, height: 400, hints: [] }
    },
  }
}

export type ClientPaymentsService = ReturnType<typeof createClientPaymentsService>

function tokenOf(ref: string | { token: string }): string {
  return typeof ref === 'string' ? ref : ref.token
}

/** Minor units of a Money input, exactly; refuses unknown currencies, currencies without an exchange rate, and excess precision. */
function minorAmount(money: MoneyInput | undefined, fallbackCurrency: string, path: string): { amount: number; currency: string } {
  if (money === undefined) return { amount: 0, currency: fallbackCurrency }
  const amount = toMoney(money, path)
  if (amount === 0) throw clientErrors.requestInvalid(`\`${path}\` must be positive`)
  return { amount, currency: money.currency }
}

function toMoney(money: MoneyInput, path: string): number {
  if (!isCurrencyCode(money.currency)) throw clientErrors.requestInvalid(`\`${path}.currency\` ${money.currency} is not an ISO 4217 currency`)
  const minor = toMinorUnits(money.value, money.exponent, money.currency)
  if (minor === undefined) throw clientErrors.requestInvalid(`\`${path}\` has more precision than ${money.currency} allows`)
  return minor
}

/** The sandbox acquirer's state of a new card, from the payment's `test.card` object. */
function sandboxStateOf(card: NonNullable<TestScenario['card']>): SandboxState {
  const state: SandboxState = { status: card.status ?? 'valid' }
  if (card.balance) state.balance_currency = card.balance.currency
  if (card.balance) state.balance = toMoney(card.balance, 'test.card.balance')
  if (card.limit) state.limit_currency = card.limit.currency
  if (card.limit) state.limit_amount = toMoney(card.limit, 'test.card.limit')
  return state
}

/** Paylike's client status code for an acquirer decline (paylike/processing-errors codes). */
function declineError(code: ProcessingErrorCode, status: string | undefined, message: string | undefined) {
  switch (code) {
    case 6:
      return clientErrors.cardExpired()
    case 7:
      return clientErrors.insufficientFunds()
    case 9:
      return clientErrors.cardDisabled()
    case 10:
      if (status === 'lost') return clientErrors.cardLost()
      if (status === 'invalid') return clientErrors.cardNumberInvalid()
      return clientErrors.rejectedByIssuer()
    case 25:
      return clientErrors.amountLimit()
    case 8:
      return clientErrors.rejectedByIssuer()
    case 11:
      return clientErrors.rejected()
    default:
      return clientErrors.methodError(message)
  }
}

/**
 * The scheme a "not supported" message names for the `test.card.scheme = unsupported` scenario:
 * the card's own scheme when that is one we do not take; for a Visa or Mastercard number (which
 * we do take) no name, since "Visa is not supported. Try with any Visa…" would contradict itself.
 */
function unsupportedSchemeName(number: string): string | undefined {
  const found = schemeOf(number)
  return found.supported ? undefined : found.name
}

/**
 * The statement descriptor of a payment's `text`: its first 22 characters when they are
 * printable ASCII after folding Latin letters to ASCII (`Kaffe på Ærø` → `Kaffe pa AEro`), else
 * undefined (the merchant's descriptor applies). The `text` itself is stored as sent.
 */
function descriptorOf(text: string | undefined): string | undefined {
  if (!text) return undefined
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[ÆæØøŒœßÐðĐđŁłÞþ‐‑‒–—‘’‚“”„]/g, (char) => FOLD[char] ?? char)
    .trim()
    .slice(0, 22)
    .trim()
  return DESCRIPTOR.test(folded) ? folded : undefined
}

const FOLD: Record<string, string> = { Æ: 'AE', æ: 'ae', Ø: 'O', ø: 'o', Œ: 'OE', œ: 'oe', ß: 'ss', Ð: 'D', ð: 'd', Đ: 'D', đ: 'd', Ł: 'L', ł: 'l', Þ: 'Th', þ: 'th', '‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '‘': "'", '’': "'", '‚': ',', '“': '"', '”': '"', '„': '"' }

/**
 * What a hint is bound to: the payment without its hints, in a canonical form, so the same
 * payment sent with its fields in another order (or a token passed bare instead of as the
 * vault's `{token}`) keeps its proofs. Tokens are in it, so a hint gathered for one card cannot
 * be replayed with another.
 */
function paymentFingerprint(body: PaymentBody): string {
  const { hints: _hints, ...rest } = body
  const card = { ...rest.card, number: tokenOf(rest.card.number), ...(rest.card.code === undefined ? {} : { code: tokenOf(rest.card.code) }) }
  return createHash('sha256').update(canonicalJson({ ...rest, card })).digest('base64url')
}

/**
 * JSON with every object's keys sorted (arrays keep their order); undefined members are left
 * out, as JSON.stringify does. Appended to one string: every payment request hashes its body
 * this way, and the arrays of a filter/map/join cost a quarter more than the text itself.
 */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) {
    let text = '['
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index]
      text += `${index === 0 ? '' : ','}${item === undefined ? 'null' : canonicalJson(item)}`
    }
    return `${text}]`
  }
  const record = value as Record<string, unknown>
  let text = '{'
  for (const key of Object.keys(record).sort()) {
    const item = record[key]
    if (item === undefined) continue
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`
  }
  return `${text}}`
}
