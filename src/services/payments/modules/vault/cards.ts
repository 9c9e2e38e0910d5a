/**
 * What a card number says about itself: the Luhn check digit, and the scheme from the issuer
 * identification number (BIN) ranges the schemes publish. Triad's acquirer takes Visa and
 * Mastercard; other recognised schemes are named so the customer hears which card failed.
 */

export type SchemeName = 'visa' | 'mastercard'

export type SchemeResult = { supported: true; scheme: SchemeName } | { supported: false; name: string } | { supported: false; name: undefined }

/** Paylike's documented test card numbers: accepted in test mode although they fail the Luhn check. */
export const TEST_CARD_NUMBERS: ReadonlySet<string> = new Set(['1000000000000000', '4100000000000000'])

export function luhnValid(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

const within = (digits: string, length: number, low: number, high: number) => {
  const prefix = Number(digits.slice(0, length))
  return prefix >= low && prefix <= high
}

/** The scheme of a card number by its leading digits. */
export function schemeOf(digits: string): SchemeResult {
  if (digits.startsWith('4')) return { supported: true, scheme: 'visa' }
  // Mastercard: 51–55, and the 2-series 2221–2720 (since 2017).
  if (within(digits, 2, 51, 55) || within(digits, 4, 2221, 2720)) return { supported: true, scheme: 'mastercard' }
  // Dankort (5019) sits inside Maestro's 50 range and Mir (2200–2204) just below Mastercard's 2-series: named first.
  if (digits.startsWith('5019')) return { supported: false, name: 'Dankort' }
  if (within(digits, 4, 2200, 2204)) return { supported: false, name: 'Mir' }
  if (within(digits, 2, 34, 34) || within(digits, 2, 37, 37)) return { supported: false, name: 'American Express' }
  if (digits.startsWith('6011') || digits.startsWith('65') || within(digits, 3, 644, 649)) return { supported: false, name: 'Discover' }
  if (within(digits, 4, 3528, 3589)) return { supported: false, name: 'JCB' }
  if (digits.startsWith('36') || digits.startsWith('38') || within(digits, 3, 300, 305)) return { supported: false, name: 'Diners Club' }
  if (digits.startsWith('62')) return { supported: false, name: 'UnionPay' }
  if (digits.startsWith('50') || within(digits, 2, 56, 69)) return { supported: false, name: 'Maestro' }
  return { supported: false, name: undefined }
}
