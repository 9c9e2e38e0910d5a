/**
 * The languages of the customer-facing pages (the hosted page and the 3-D Secure frames), and
 * how they format money, so a frame says the amount the way the page around it does.
 */
export type Locale = 'en' | 'da'

/** The Intl locale each language formats numbers with. */
export const INTL_LOCALE: Record<Locale, string> = { en: 'en-GB', da: 'da-DK' }

/** `da`, `da_DK`, `da-DK` → Danish; anything else → English. Without `locale`, the browser's first language decides. */
export function pickLocale(locale: string | undefined, acceptLanguage: string | undefined): Locale {
  const wanted = locale ?? acceptLanguage?.split(',')[0] ?? ''
  const language = wanted.trim().slice(0, 2).toLowerCase()
  return language === 'da' ? 'da' : 'en'
}

/** `195, EUR, 2, en` → "€1.95"; `1234, DKK, 2, da` → "12,34 kr.". The hosted page's script uses the same rule. */
export function formatAmount(minor: number, currency: string, exponent: number, locale: Locale): string {
  return new Intl.NumberFormat(INTL_LOCALE[locale], {
    style: 'currency',
    currency,
    minimumFractionDigits: exponent,
    maximumFractionDigits: exponent,
  }).format(minor / 10 ** exponent)
}
