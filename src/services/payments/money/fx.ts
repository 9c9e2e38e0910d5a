import { readFileSync } from 'node:fs'
import { currencyExponent } from '../../../core/money.ts'

/** A rate as an exact fraction: units of a currency per one unit of the table's base. */
interface Rate {
  numerator: bigint
  denominator: bigint
}

export interface FxTable {
  base: string
  date: string
  rates: ReadonlyMap<string, Rate>
}

const SHIPPED_FX_RATES = new URL('../data/fx-rates.json', import.meta.url)

function parseDecimal(text: string): Rate | undefined {
  const match = /^(\d{1,12})(?:\.(\d{1,12}))?$/.exec(text)
  if (!match) return undefined
  const fraction = match[2] ?? ''
  const numerator = BigInt(match[1] + fraction)
  if (numerator === 0n) return undefined
  return { numerator, denominator: 10n ** BigInt(fraction.length) }
}

/**
 * Reads a rate table `{base, date, rates: {CODE: "decimal"}}`. Rates are decimal strings so
 * they stay exact; every code must be an ISO 4217 currency with a minor unit.
 */
export function loadFxTable(path: string | URL = SHIPPED_FX_RATES): FxTable {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new Error(`PAYMENTS_FX_RATES: cannot read ${String(path)} as JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error })
  }
  const table = raw as { base?: unknown; date?: unknown; rates?: unknown }
  if (typeof table.base !== 'string' || typeof table.rates !== 'object' || table.rates === null) {
    throw new Error(`PAYMENTS_FX_RATES: ${String(path)} must hold {base, date, rates: {CODE: "decimal"}}`)
  }
  const rates = new Map<string, Rate>()
  for (const [code, value] of Object.entries(table.rates)) {
    const rate = typeof value === 'string' ? parseDecimal(value) : undefined
    if (currencyExponent(code) === undefined || !rate) throw new Error(`PAYMENTS_FX_RATES: bad rate ${code}=${JSON.stringify(value)} in ${String(path)}`)
    rates.set(code, rate)
  }
  rates.set(table.base, { numerator: 1n, denominator: 1n })
  return { base: table.base, date: typeof table.date === 'string' ? table.date : '', rates }
}

export function hasRate(fx: FxTable, currency: string): boolean {
  return fx.rates.has(currency)
}

/** `ceil(a / b)` and `floor(a / b)` for non-negative bigints. */
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b
const floorDiv = (a: bigint, b: bigint) => a / b

const PPM = 1_000_000n

/**
 * Converts `amount` minor units of `from` into minor units of `to`, exactly, then rounds once:
 *
 *   to = amount × 10^exp(to) / 10^exp(from) × rate(to) / rate(from) × (1 ∓ markup)
 *
 * computed as one fraction of integers (no floating point). A `credit` to the merchant (a
 * capture) takes the markup off and rounds down; a `debit` (a refund, a lost dispute) adds the
 * markup and rounds up: rounding never favours the merchant by a fraction of a minor unit, so
 * the house's books never run short. The same currency converts exactly, with no markup.
 */
export function convert(fx: FxTable, amount: number, from: string, to: string, options: { markupPpm: number; direction: 'credit' | 'debit' }): number {
  if (amount < 0 || !Number.isSafeInteger(amount)) throw new RangeError(`cannot convert ${amount}`)
  if (from === to) return amount
  const source = fx.rates.get(from)
  const target = fx.rates.get(to)
  const fromExponent = currencyExponent(from)
  const toExponent = currencyExponent(to)
  if (!source || !target || fromExponent === undefined || toExponent === undefined) throw new RangeError(`no rate between ${from} and ${to}`)
  const markup = BigInt(options.markupPpm)
  const factor = options.direction === 'credit' ? PPM - markup : PPM + markup
  const numerator = BigInt(amount) * 10n ** BigInt(toExponent) * target.numerator * source.denominator * factor
  const denominator = 10n ** BigInt(fromExponent) * target.denominator * source.numerator * PPM
  const result = options.direction === 'credit' ? floorDiv(numerator, denominator) : ceilDiv(numerator, denominator)
  return Number(result)
}

/** `amount × ppm / 10^6`, rounded up (a fee never rounds in the merchant's favour either). */
export function rateOf(amount: number, ppm: number): number {
  return Number(ceilDiv(BigInt(amount) * BigInt(ppm), PPM))
}
