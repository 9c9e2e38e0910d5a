// Amounts, dates and statuses as the person reads and types them, in the page's locale.
import { config, t } from './page.js'

export function exponentOf(currency) {
  const exponent = config.exponents[currency]
  return typeof exponent === 'number' ? exponent : 2
}

export function money(minor, currency) {
  const exponent = exponentOf(currency)
  try {
    return new Intl.NumberFormat(config.locale, {
      style: 'currency',
      currency: currency,
      minimumFractionDigits: exponent,
      maximumFractionDigits: exponent,
    }).format(minor / Math.pow(10, exponent))
  } catch (error) {
    return currency + ' ' + (minor / Math.pow(10, exponent)).toFixed(exponent)
  }
}

/** Major units as a person types them ("1,95", "1.234,56", "12") → minor units, or null. */
export function parseMajor(text, currency) {
  let value = String(text).replace(/[\s\u00a0]/g, '')
  const comma = value.lastIndexOf(',')
  const dot = value.lastIndexOf('.')
  if (comma >= 0 && dot >= 0) value = comma > dot ? value.replace(/\./g, '').replace(',', '.') : value.replace(/,/g, '')
  else if (comma >= 0) value = value.replace(',', '.')
  const match = /^(\d{1,15})(?:\.(\d+))?$/.exec(value)
  if (!match) return null
  const exponent = exponentOf(currency)
  const fraction = match[2] || ''
  if (fraction.length > exponent) return null
  return Number(match[1]) * Math.pow(10, exponent) + Number((fraction + '0'.repeat(exponent)).slice(0, exponent) || '0')
}

/** Minor units as the amount field shows them (no grouping, the locale's decimal sign). */
export function majorText(minor, currency) {
  const exponent = exponentOf(currency)
  const text = (minor / Math.pow(10, exponent)).toFixed(exponent)
  return config.lang === 'da' ? text.replace('.', ',') : text
}

const dateTime = new Intl.DateTimeFormat(config.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
const dayFormat = new Intl.DateTimeFormat(config.locale, { dateStyle: 'medium', timeZone: 'UTC' })

export function when(iso) {
  return iso ? dateTime.format(new Date(iso)) + ' UTC' : '–'
}

export function dayText(day) {
  return dayFormat.format(new Date(day + 'T00:00:00Z'))
}

/** The status a transaction is listed under; the same order as the list's filter[status]. */
export function statusOf(transaction) {
  if (!transaction.successful) return 'declined'
  if (transaction.refundedAmount > 0) return 'refunded'
  if (transaction.capturedAmount > 0) return 'captured'
  if (transaction.voidedAmount === transaction.amount) return 'voided'
  return 'authorized'
}

export function statusLabel(status) {
  return t['status' + status.charAt(0).toUpperCase() + status.slice(1)] || status
}

export function cardText(card) {
  return card ? card.scheme + ' ' + card.bin + '…' + card.last4 : '–'
}
