import { escapeHtml, scriptJson } from '../hosted-page/html.ts'

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

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

/** A page that hands its hints to the page that opened the frame, then says so. */
export function hintsPage(title: string, message: string, hints: string[], targetOrigin: string): string {
  return page(
    title,
    `<p role="status">${escapeHtml(message)}</p><script>window.parent.postMessage({hints:${scriptJson(hints)}},${scriptJson(targetOrigin)})</script>`,
  )
}

/** The fingerprint (3DS method) frame when the "issuer" never answers (test.tds.fingerprint = timeout). */
export function silentPage(): string {
  return page('3-D Secure', '<p>Collecting device data…</p>')
}

export function framePageError(message: string): string {
  return page('3-D Secure', `<p class="error" role="alert">${escapeHtml(message)}</p>`)
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
export function challengePage(view: ChallengeView): string {
  const [scheme, last4] = (view.card ?? '').split(':')
  const cardLabel = scheme && last4 ? `${scheme === 'visa' ? 'Visa' : 'Mastercard'} •••• ${last4}` : ''
  return page(
    'Confirm your payment – 3-D Secure',
    `<main><div class="bank">Triad Test Bank · 3-D Secure</div>
<h1>Confirm your payment</h1>
<dl>${view.merchant ? `<dt>Merchant</dt><dd>${escapeHtml(view.merchant)}</dd>` : ''}${view.amount ? `<dt>Amount</dt><dd>${escapeHtml(view.amount)}</dd>` : ''}${cardLabel ? `<dt>Card</dt><dd>${escapeHtml(cardLabel)}</dd>` : ''}</dl>
<p>We sent you a one-time code (test mode: it is shown here).</p>
<p>Your code: <span class="code" data-testid="tds-code">${escapeHtml(view.code)}</span></p>
<form method="post" action="challenge/complete">
<input type="hidden" name="creq" value="${escapeHtml(view.creq)}">
<label for="otp">One-time code</label>
<input id="otp" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}" aria-describedby="otp-error" autofocus>
<p id="otp-error" class="error" role="alert">${view.error ? escapeHtml(view.error) : ''}</p>
<div class="actions"><button class="approve" type="submit" name="decision" value="approve">Approve</button><button class="reject" type="submit" name="decision" value="reject" formnovalidate>Reject</button></div>
</form></main>`,
  )
}
