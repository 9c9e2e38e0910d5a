import { documentHead, escapeHtml, scriptJson } from '../../http/html.ts'
import { formatAmount, INTL_LOCALE, type Locale } from '../../http/locale.ts'
import { fill, MESSAGES, type Messages } from './hosted-page.i18n.ts'
import type { PaymentLink } from './hosted-page.service.ts'

function head(locale: Locale, title: string): string {
  return documentHead(locale, title, '/pos/assets/pos.css')
}

/** The payment page: the amount rendered by the server when the link has one, else the amount-entry screen first. */
export function renderPaymentPage(link: PaymentLink, locale: Locale): string {
  const t = MESSAGES[locale]
  const amountText = link.amount === undefined ? '' : formatAmount(link.amount, link.currency, link.exponent, locale)
  const config = {
    key: link.key,
    test: link.test,
    currency: link.currency,
    exponent: link.exponent,
    amount: link.amount ?? null,
    reference: link.reference ?? null,
    redirect: link.redirect ?? null,
    recurring: link.recurring,
    merchant: link.merchantName,
    locale: INTL_LOCALE[locale],
    messages: t,
  }
  const field = (id: string, label: string, attributes: string, hint?: string) => `
      <div class="field">
        <label for="${id}">${escapeHtml(label)}</label>${hint ? `\n        <span class="hint" id="${id}-hint">${escapeHtml(hint)}</span>` : ''}
        <input id="${id}" name="${id}" ${attributes} aria-describedby="${hint ? `${id}-hint ` : ''}${id}-error">
        <p class="field-error" id="${id}-error" hidden></p>
      </div>`
  const scenarios = link.test
    ? `
      <div class="field test-only">
        <label for="scenario">${escapeHtml(t.testScenario)}</label>
        <select id="scenario" name="scenario">
          <option value="challenge">${escapeHtml(t.scenarioChallenge)}</option>
          <option value="frictionless">${escapeHtml(t.scenarioFrictionless)}</option>
          <option value="insufficient">${escapeHtml(t.scenarioInsufficient)}</option>
          <option value="expired">${escapeHtml(t.scenarioExpired)}</option>
          <option value="tds-rejected">${escapeHtml(t.scenarioTdsRejected)}</option>
        </select>
      </div>`
    : ''
  return `${head(locale, `${t.htmlTitle} – ${link.merchantName}`)}
<script src="/pos/assets/pos.js" defer></script>
</head>
<body>
<main class="panel">
  <header class="summary">
    <p class="to">${escapeHtml(t.paymentTo)}</p>
    <h1 id="merchant">${escapeHtml(link.merchantName)}</h1>
    ${link.test ? `<p class="badge">${escapeHtml(t.testMode)}</p>` : ''}
    <p class="amount" id="amount-display" data-testid="amount">${escapeHtml(amountText)}</p>
    ${link.text ? `<p class="text">${escapeHtml(link.text)}</p>` : ''}
  </header>
  <div id="live" class="visually-hidden" aria-live="polite"></div>

  <section id="screen-amount"${link.amount === undefined ? '' : ' hidden'}>
    <form id="amount-form" novalidate>
      <div class="field">
        <label id="amount-label" for="amount-input">${escapeHtml(fill(t.amountIn, { currency: link.currency }))}</label>
        <input id="amount-input" name="amount" inputmode="decimal" autocomplete="off" aria-describedby="amount-input-error">
        <p class="field-error" id="amount-input-error" hidden></p>
      </div>
      <button type="submit" class="primary">${escapeHtml(t.continue)}</button>
    </form>
  </section>

  <section id="screen-card"${link.amount === undefined ? ' hidden' : ''}>
    <form id="card-form" novalidate>
      <div id="form-error" class="form-error" role="alert" hidden></div>${field('card-number', t.cardNumber, 'inputmode="numeric" autocomplete="cc-number" maxlength="23" spellcheck="false"')}
      <div class="row">${field('card-expiry', t.expiry, 'inputmode="numeric" autocomplete="cc-exp" maxlength="7"', t.expiryHint)}${field('card-code', t.securityCode, 'inputmode="numeric" autocomplete="cc-csc" maxlength="4"', t.securityCodeHint)}
      </div>${scenarios}
      ${link.recurring ? `<p class="notice" id="recurring-notice">${escapeHtml(fill(t.recurring, { merchant: link.merchantName }))}</p>` : ''}
      <button type="submit" class="primary" id="pay">${escapeHtml(fill(t.pay, { amount: amountText }))}</button>
    </form>
  </section>

  <section id="screen-tds" aria-labelledby="tds-title" hidden>
    <h2 id="tds-title" tabindex="-1">${escapeHtml(t.tdsTitle)}</h2>
    <div id="tds-frame" class="tds-frame"></div>
  </section>

  <section id="screen-success" aria-labelledby="success-title" hidden>
    <h2 id="success-title" tabindex="-1">${escapeHtml(t.successTitle)}</h2>
    <p id="success-text"></p>
    <p id="redirecting" hidden>${escapeHtml(t.redirecting)}</p>
    <a id="back-to-shop" class="button primary" hidden>${escapeHtml(t.backToShop)}</a>
  </section>

  <section id="screen-failure" aria-labelledby="failure-title" hidden>
    <h2 id="failure-title" tabindex="-1">${escapeHtml(t.failureTitle)}</h2>
    <p id="failure-text" data-testid="failure"></p>
    <button type="button" class="primary" id="retry">${escapeHtml(t.tryAgain)}</button>
  </section>
  <p class="cancel" id="cancel-row" hidden><button type="button" class="secondary" id="cancel">${escapeHtml(link.redirect ? t.cancel : t.goBack)}</button></p>
  <div id="tds-background" class="tds-background" aria-hidden="true"></div>
</main>
<script type="application/json" id="pos-config">${scriptJson(config)}</script>
</body>
</html>
`
}

/** A clear page for a link that cannot be paid: what is wrong, in the customer's language; never a stack trace. */
export function renderErrorPage(locale: Locale, message: keyof Messages): string {
  const t: Messages = MESSAGES[locale]
  return `${head(locale, t.errorTitle)}
</head>
<body>
<main class="panel">
  <h1>${escapeHtml(t.errorTitle)}</h1>
  <p class="error-text" data-testid="error">${escapeHtml(t[message])}</p>
</main>
</body>
</html>
`
}
