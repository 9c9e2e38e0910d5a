import { currencyExponent, parseMajor } from '../../../../core/money.ts'
import type { PaymentsContext } from '../../context.ts'
import { createMerchantDirectory } from '../merchants/index.ts'
import { hasRate } from '../../money/fx.ts'
import type { Messages } from './hosted-page.i18n.ts'

export interface LinkQuery {
  key?: string
  test?: string
  currency?: string
  value?: string
  reference?: string
  text?: string
  redirect?: string
  locale?: string
  recurring?: string
}

/** What the page shows: a payment form (with or without a fixed amount). */
export interface PaymentLink {
  key: string
  test: boolean
  merchantName: string
  currency: string
  exponent: number
  /** Minor units; undefined shows the amount-entry screen first. */
  amount: number | undefined
  reference: string | undefined
  text: string | undefined
  redirect: string | undefined
  recurring: boolean
}

export type LinkResult = { ok: true; link: PaymentLink } | { ok: false; status: 400 | 404; message: keyof Messages }

const YES = new Set(['1', 'y', 'yes', 'true'])
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Reads a payment link (`/pos?key=…`): the merchant named by its public key, in the link's test
 * mode, an amount in major units, and a return address. Every problem is a reason the page
 * names in the customer's language; nothing here throws for bad input.
 */
export function createHostedPageService(ctx: PaymentsContext) {
  const merchants = createMerchantDirectory(ctx.database)
  return {
    async resolve(query: LinkQuery): Promise<LinkResult> {
      const key = query.key?.trim()
      if (!key) return { ok: false, status: 400, message: 'errorKeyMissing' }
      const merchant = UUID.test(key) ? await merchants.byKey(key) : undefined
      if (!merchant) return { ok: false, status: 404, message: 'errorKeyUnknown' }
      const test = query.test !== undefined && YES.has(query.test.toLowerCase())
      if (merchant.test === 1 && !test) return { ok: false, status: 400, message: 'errorTestMissing' }
      if (merchant.test === 0 && test) return { ok: false, status: 400, message: 'errorTestLive' }

      const currency = (query.currency ?? merchant.currency).trim().toUpperCase()
      const exponent = currencyExponent(currency)
      if (exponent === undefined || !hasRate(ctx.fx, currency)) return { ok: false, status: 400, message: 'errorCurrency' }

      let amount: number | undefined
      if (query.value !== undefined && query.value.trim() !== '') {
        amount = parseMajor(query.value.replace(',', '.'), currency)
        if (amount === undefined || amount <= 0) return { ok: false, status: 400, message: 'errorValue' }
      }

      let redirect: string | undefined
      if (query.redirect) {
        try {
          const url = new URL(query.redirect)
          if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme')
          redirect = url.toString()
        } catch {
          return { ok: false, status: 400, message: 'errorRedirect' }
        }
      }
      if (query.text && query.text.length > 1024) return { ok: false, status: 400, message: 'errorText' }
      if (query.reference && query.reference.length > 255) return { ok: false, status: 400, message: 'errorReference' }

      return {
        ok: true,
        link: {
          key,
          test,
          merchantName: merchant.name ?? merchant.descriptor,
          currency,
          exponent,
          amount,
          reference: query.reference || undefined,
          text: query.text || undefined,
          redirect,
          recurring: query.recurring !== undefined && YES.has(query.recurring.toLowerCase()),
        },
      }
    },
  }
}

