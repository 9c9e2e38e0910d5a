import currencyCodes from 'currency-codes'

/**
 * Money is an integer count of minor units of a currency. How many minor units make a major
 * unit is ISO 4217's "minor unit" (the exponent): 2 for EUR, 0 for JPY, 3 for BHD. The table
 * comes from the `currency-codes` package (ISO 4217 list one, `publishDate` in the package), not
 * from guesses; codes without a minor unit (gold, SDR, test codes) are not money here.
 */
const exponents: ReadonlyMap<string, number> = new Map(
  currencyCodes.data.filter((record) => Number.isInteger(record.digits)).map((record) => [record.code, record.digits]),
)

export function isCurrencyCode(code: string): boolean {
  return exponents.has(code)
}

/** The ISO 4217 exponent of `code`, or undefined for an unknown code. */
export function currencyExponent(code: string): number | undefined {
  return exponents.get(code)
}

/** Every ISO 4217 code with its exponent, for a page that formats amounts itself. */
export function currencyExponents(): Record<string, number> {
  return Object.fromEntries(exponents)
}

function exponentOf(code: string): number {
  const exponent = exponents.get(code)
  if (exponent === undefined) throw new RangeError(`unknown currency ${code}`)
  return exponent
}

/** `formatMinor(250, 'EUR')` → `"EUR 2.50"`; `formatMinor(-5, 'JPY')` → `"JPY -5"`. For messages. */
export function formatMinor(amount: number, currency: string): string {
  const exponent = exponentOf(currency)
  const sign = amount < 0 ? '-' : ''
  const digits = Math.abs(amount)
    .toString()
    .padStart(exponent + 1, '0')
  const major = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
  return `${currency} ${sign}${major}`
}

/**
 * Parses a decimal amount in major units (`"1.95"`) into minor units (195), exactly: no float
 * arithmetic, and a value with more decimals than the currency has (`"1.955"` in EUR) is refused
 * rather than rounded. Returns undefined for anything that is not a plain non-negative decimal.
 */
export function parseMajor(value: string, currency: string): number | undefined {
  const match = /^(\d{1,15})(?:\.(\d+))?$/.exec(value.trim())
  if (!match) return undefined
  const exponent = exponentOf(currency)
  const fraction = (match[2] ?? '').replace(/0+$/, '')
  if (fraction.length > exponent) return undefined
  const minor = Number(match[1] + fraction.padEnd(exponent, '0'))
  return Number.isSafeInteger(minor) ? minor : undefined
}

/** Converts a `{exponent, value}` pair (as the client payment API sends amounts) to minor units of `currency`, exactly, or undefined when it has more precision than the currency allows. */
export function toMinorUnits(value: number, exponent: number, currency: string): number | undefined {
  const target = exponentOf(currency)
  if (!Number.isSafeInteger(value) || !Number.isInteger(exponent) || exponent < 0) return undefined
  if (exponent <= target) {
    const scaled = value * 10 ** (target - exponent)
    return Number.isSafeInteger(scaled) ? scaled : undefined
  }
  const divisor = 10 ** (exponent - target)
  return value % divisor === 0 ? value / divisor : undefined
}
