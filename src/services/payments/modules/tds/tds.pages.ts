import { escapeHtml, scriptJson } from '../hosted-page/html.ts'
import type { Locale } from '../hosted-page/hosted-page.i18n.ts'

// The simulated issuer's 3-D Secure pages, loaded in frames by the client (the hosted page or
// any Paylike-compatible SDK). Small, self-contained, no external resources.

const STYLE = `body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:20px;color:#1b1f24;background:#fff}
h1{font-size:1.1rem;margin:0 0 .5rem}p{margin:.4rem 0}.bank{font-weight:700;color:#0b4f8a;letter-spacing:.02em;margin-bottom:1rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.2rem .8rem;margin:.8rem 0}dt{color:#4a5560}dd{margin:0}
.code{font:700 1.6rem/1.2 ui-monospace,Menlo,monospace;letter-spacing:.2em;background:#eef4fa;border:1px dashed #0b4f8a;padding:.3rem .6rem;display:inline-block}
label{display:block;font-weight:600;margin:.8rem 0 .3rem}input{font:inherit;padding:.5rem;border:1px solid #5b6670;border-radius:6px;width:10ch;letter-spacing:.15em}
.actions{display:flex;gap:.6rem;margin-top:1rem}button{font:inherit;padding:.55rem 1rem;border-radius:6px;border:1px solid #0b4f8a;cursor:pointer}
.approve{background:#0b4f8a;color:#fff}.reject{background:#fff;color:#0b4f8a}button:focus-visible,input:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.error{color:#a4001d;font-weight:600}`

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
    wrongCode: 'That code is not correct. Type the six digits shown above.',
    confirmed: 'Payment confirmed.',
    notConfirmed: 'Payment not confirmed.',
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
    wrongCode: 'Koden er forkert. Skriv de seks cifre, der vises ovenfor.',
    confirmed: 'Betalingen er bekræftet.',
    notConfirmed: 'Betalingen blev ikke bekræftet.',
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
  creq: string
  code: string
  amount: string | undefined
  merchant: string | undefined
  card: string | undefined
  error?: string
}

/** The challenge: the test bank shows the one-time code it "sent", and the cardholder approves or rejects. */
export function challengePage(locale: Locale, view: ChallengeView): string {
  const t = TDS_TEXT[locale]
  const [scheme, last4] = (view.card ?? '').split(':')
  const cardLabel = scheme && last4 ? `${scheme === 'visa' ? 'Visa' : 'Mastercard'} •••• ${last4}` : ''
  return page(
    locale,
    t.pageTitle,
    `<main><div class="bank">Triad Test Bank · 3-D Secure</div>
<h1>${escapeHtml(t.heading)}</h1>
<dl>${view.merchant ? `<dt>${t.merchant}</dt><dd>${escapeHtml(view.merchant)}</dd>` : ''}${view.amount ? `<dt>${t.amount}</dt><dd>${escapeHtml(view.amount)}</dd>` : ''}${cardLabel ? `<dt>${t.card}</dt><dd>${escapeHtml(cardLabel)}</dd>` : ''}</dl>
<p>${escapeHtml(t.sent)}</p>
<p>${escapeHtml(t.yourCode)} <span class="code" data-testid="tds-code">${escapeHtml(view.code)}</span></p>
<form method="post" action="challenge/complete">
<input type="hidden" name="creq" value="${escapeHtml(view.creq)}">
<label for="otp">${escapeHtml(t.codeLabel)}</label>
<input id="otp" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}" aria-describedby="otp-error" autofocus>
<p id="otp-error" class="error" role="alert">${view.error ? escapeHtml(view.error) : ''}</p>
<div class="actions"><button class="approve" type="submit" name="decision" value="approve">${escapeHtml(t.approve)}</button><button class="reject" type="submit" name="decision" value="reject" formnovalidate>${escapeHtml(t.reject)}</button></div>
</form></main>`,
  )
}
