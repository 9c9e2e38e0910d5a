import { escapeHtml, scriptJson } from '../../http/html.ts'
import { formatAmount, type Locale } from '../../http/locale.ts'

// The simulated issuer's 3-D Secure pages, loaded in frames by the client (the hosted page or
// any Paylike-compatible SDK). Small, self-contained, no external resources.

// Sized for the frame the challenge announces (390 × 400, Paylike's example client's fixed
// size): the challenge with an error line and both buttons fits without scrolling, in English
// and in Danish (checked in Chromium by the browser tests).
const STYLE = `*{box-sizing:border-box}html,body{margin:0}body{font:15px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:12px 16px;color:#1b1f24;background:#fff}
h1{font-size:1.05rem;margin:0 0 .35rem}p{margin:.3rem 0}.bank{font-weight:700;color:#0b4f8a;letter-spacing:.02em;margin-bottom:.4rem;font-size:.9rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.1rem .8rem;margin:.35rem 0}dt{color:#4a5560}dd{margin:0;overflow-wrap:anywhere}
.code{font:700 1.3rem/1.2 ui-monospace,Menlo,monospace;letter-spacing:.18em;background:#eef4fa;border:1px dashed #0b4f8a;padding:.1rem .45rem;display:inline-block}
label{display:block;font-weight:600;margin:.5rem 0 .2rem}input{font:inherit;padding:.4rem .5rem;border:1px solid #5b6670;border-radius:6px;width:10ch;letter-spacing:.15em}
input[aria-invalid=true]{border:2px solid #a4001d}.actions{display:flex;gap:.6rem;margin-top:.4rem}button{font:inherit;padding:.45rem 1rem;border-radius:6px;border:1px solid #0b4f8a;cursor:pointer}
.approve{background:#0b4f8a;color:#fff}.reject{background:#fff;color:#0b4f8a}button:focus-visible,input:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.error{color:#a4001d;font-weight:600;margin:.3rem 0 0;min-height:1.35em}`

/** The issuer's words; the frame follows the browser's language (Accept-Language), English or Danish. */
export const TDS_TEXT = {
  en: {
    title: '3-D Secure',
    collecting: 'Collecting device data…',
    collected: 'Device data collected.',
    expired: 'This 3-D Secure session is invalid or has expired. Close this window and try the payment again.',
    heading: 'Confirm your payment',
    pageTitle: 'Confirm your payment – 3-D Secure',
    merchant: 'Merchant',
    amount: 'Amount',
    card: 'Card',
    sent: 'We sent you a one-time code (test mode: it is shown here).',
    yourCode: 'Your code:',
    codeLabel: 'One-time code',
    approve: 'Approve',
    reject: 'Reject',
    wrongCode: 'That code is not correct. Type the six digits shown above ({left} attempts left).',
    wrongCodeLast: 'That code is not correct. Type the six digits shown above (last attempt).',
    confirmed: 'Payment confirmed.',
    notConfirmed: 'Payment not confirmed.',
    failed: 'The code was wrong too many times, so the payment is not confirmed.',
  },
  da: {
    title: '3-D Secure',
    collecting: 'Indsamler enhedsdata…',
    collected: 'Enhedsdata indsamlet.',
    expired: 'Denne 3-D Secure-session er ugyldig eller udløbet. Luk vinduet, og prøv betalingen igen.',
    heading: 'Bekræft din betaling',
    pageTitle: 'Bekræft din betaling – 3-D Secure',
    merchant: 'Forretning',
    amount: 'Beløb',
    card: 'Kort',
    sent: 'Vi har sendt dig en engangskode (testtilstand: den vises her).',
    yourCode: 'Din kode:',
    codeLabel: 'Engangskode',
    approve: 'Godkend',
    reject: 'Afvis',
    wrongCode: 'Koden er forkert. Skriv de seks cifre, der vises ovenfor ({left} forsøg tilbage).',
    wrongCodeLast: 'Koden er forkert. Skriv de seks cifre, der vises ovenfor (sidste forsøg).',
    confirmed: 'Betalingen er bekræftet.',
    notConfirmed: 'Betalingen blev ikke bekræftet.',
    failed: 'Koden var forkert for mange gange, så betalingen er ikke bekræftet.',
  },
} as const satisfies Record<Locale, Record<string, string>>

function page(locale: Locale, title: string, body: string): string {
  return `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

/** A page that hands its hints to the page that opened the frame, then says so. */
export function hintsPage(locale: Locale, message: string, hints: string[], targetOrigin: string): string {
  return page(
    locale,
    TDS_TEXT[locale].title,
    `<p role="status">${escapeHtml(message)}</p><script>window.parent.postMessage({hints:${scriptJson(hints)}},${scriptJson(targetOrigin)})</script>`,
  )
}

/** The fingerprint (3DS method) frame when the "issuer" never answers (test.tds.fingerprint = timeout). */
export function silentPage(locale: Locale): string {
  return page(locale, TDS_TEXT[locale].title, `<p>${escapeHtml(TDS_TEXT[locale].collecting)}</p>`)
}

export function framePageError(locale: Locale): string {
  return page(locale, TDS_TEXT[locale].title, `<p class="error" role="alert">${escapeHtml(TDS_TEXT[locale].expired)}</p>`)
}

export interface ChallengeView {
  /** The absolute URL the answer is posted to (a relative one would move with each answer's URL). */
  action: string
  creq: string
  /** The signed count of wrong codes so far, posted back with the next answer. */
  tries: string
  code: string
  amount: { minor: number; currency: string; exponent: number } | undefined
  merchant: string | undefined
  card: string | undefined
  /** Wrong codes left; set after a wrong code, to show the error. */
  left?: number
}

/** The challenge: the test bank shows the one-time code it "sent", and the cardholder approves or rejects. */
export function challengePage(locale: Locale, view: ChallengeView): string {
  const t = TDS_TEXT[locale]
  const [scheme, last4] = (view.card ?? '').split(':')
  const cardLabel = scheme && last4 ? `${scheme === 'visa' ? 'Visa' : 'Mastercard'} •••• ${last4}` : ''
  const amount = view.amount ? formatAmount(view.amount.minor, view.amount.currency, view.amount.exponent, locale) : ''
  const error = view.left === undefined ? '' : view.left > 1 ? t.wrongCode.replace('{left}', String(view.left)) : t.wrongCodeLast
  return page(
    locale,
    t.pageTitle,
    `<main><div class="bank">Triad Test Bank · 3-D Secure</div>
<h1>${escapeHtml(t.heading)}</h1>
<dl>${view.merchant ? `<dt>${t.merchant}</dt><dd>${escapeHtml(view.merchant)}</dd>` : ''}${amount ? `<dt>${t.amount}</dt><dd data-testid="tds-amount">${escapeHtml(amount)}</dd>` : ''}${cardLabel ? `<dt>${t.card}</dt><dd>${escapeHtml(cardLabel)}</dd>` : ''}</dl>
<p>${escapeHtml(t.sent)}</p>
<p>${escapeHtml(t.yourCode)} <span class="code" data-testid="tds-code">${escapeHtml(view.code)}</span></p>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="creq" value="${escapeHtml(view.creq)}">
<input type="hidden" name="tries" value="${escapeHtml(view.tries)}">
<label for="otp">${escapeHtml(t.codeLabel)}</label>
<input id="otp" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}" aria-describedby="otp-error"${error ? ' aria-invalid="true"' : ''} autofocus>
<p id="otp-error" class="error" role="alert">${escapeHtml(error)}</p>
<div class="actions"><button class="approve" type="submit" name="decision" value="approve">${escapeHtml(t.approve)}</button><button class="reject" type="submit" name="decision" value="reject" formnovalidate>${escapeHtml(t.reject)}</button></div>
</form></main><script>try{document.getElementById('otp').focus()}catch(e){}</script>`,
  )
}
