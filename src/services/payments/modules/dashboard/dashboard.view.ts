import { currencyExponents } from '../../../../core/money.ts'
import { documentHead, escapeHtml, scriptJson } from '../../http/html.ts'
import { INTL_LOCALE, type Locale } from '../../http/locale.ts'
import { MESSAGES, type Messages } from './dashboard.i18n.ts'

/** What the page needs besides its words: the server's today (UTC), so "today" is the server's. */
interface PageContext {
  locale: Locale
  today: string
}

const LANGUAGES: Array<{ locale: Locale; name: string }> = [
  { locale: 'en', name: 'English' },
  { locale: 'da', name: 'Dansk' },
]

/**
 * The dashboard page: a sign-in form and the dashboard's frame with every label rendered here;
 * the script (assets/dashboard.js, an ES module that imports one module per view beside it)
 * signs in, fills the tables and draws the charts from the merchant API. Every text is escaped;
 * the configuration travels as inert JSON.
 */
export function renderDashboardPage(context: PageContext): string {
  const t: Messages = MESSAGES[context.locale]
  const e = (key: keyof Messages) => escapeHtml(t[key])
  const config = { locale: INTL_LOCALE[context.locale], lang: context.locale, today: context.today, exponents: currencyExponents(), messages: t }
  const languages = LANGUAGES.map(({ locale, name }) =>
    locale === context.locale
      ? `<a href="/dashboard?lang=${locale}" lang="${locale}" hreflang="${locale}" aria-current="true">${name}</a>`
      : `<a href="/dashboard?lang=${locale}" lang="${locale}" hreflang="${locale}">${name}</a>`,
  ).join('\n      ')
  const field = (id: string, label: keyof Messages, attributes: string, hint?: keyof Messages) => `
        <div class="field">
          <label for="${id}">${e(label)}</label>
          <input id="${id}" name="${id}" ${attributes}${hint ? ` aria-describedby="${id}-hint"` : ''}>${hint ? `\n          <span class="hint" id="${id}-hint">${e(hint)}</span>` : ''}
        </div>`
  const statuses = (['Authorized', 'Captured', 'Refunded', 'Voided', 'Declined'] as const)
    .map((name) => `<option value="${name.toLowerCase()}">${e(`status${name}`)}</option>`)
    .join('')
  // A table under a heading of the same words keeps its caption for screen readers only.
  const table = (id: string, caption: keyof Messages, columns: Array<keyof Messages>, headed = false) => `
      <div class="table-wrap" tabindex="0" role="region" aria-labelledby="${id}-caption">
        <table id="${id}">
          <caption id="${id}-caption"${headed ? ' class="visually-hidden"' : ''}>${e(caption)}</caption>
          <thead><tr>${columns.map((column) => `<th scope="col">${e(column)}</th>`).join('')}</tr></thead>
          <tbody></tbody>
        </table>
      </div>`
  return `${documentHead(context.locale, `${t.htmlTitle} – ${t.product}`, '/dashboard/assets/dashboard.css')}
<script src="/dashboard/assets/webauthn-json.js" defer></script>
<script type="module" src="/dashboard/assets/dashboard.js"></script>
</head>
<body>
<a class="skip" href="#main">${e('skip')}</a>
<header class="top">
  <p class="product">${e('product')}</p>
  <h1>${e('htmlTitle')}</h1>
  <nav class="languages" aria-label="${e('language')}">
      ${languages}
  </nav>
  <div id="account" class="account" hidden>
    <p id="who" class="muted"></p>
    <label for="merchant">${e('merchant')}</label>
    <select id="merchant"></select>
    <button type="button" id="add-passkey" class="secondary" hidden>${e('addPasskey')}</button>
    <button type="button" id="sign-out" class="secondary">${e('signOut')}</button>
  </div>
</header>
<div id="live" class="visually-hidden" aria-live="polite" role="status"></div>
<main id="main" tabindex="-1">
  <section id="sign-in" class="card narrow" aria-labelledby="sign-in-title" hidden>
    <h2 id="sign-in-title">${e('signInTitle')}</h2>
    <div id="link-landing" hidden>
      <h3 id="link-title">${e('linkTitle')}</h3>
      <p id="link-hint" class="hint">${e('linkHint')}</p>
      <button type="button" id="follow-link" class="primary" aria-describedby="link-hint">${e('linkContinue')}</button>
    </div>
    <p id="link-error" class="field-error" hidden></p>
    <form id="email-form" novalidate>
      <p id="email-hint" class="hint">${e('emailHint')}</p>
      <div class="field">
        <label for="email">${e('email')}</label>
        <input id="email" name="email" type="email" autocomplete="email" spellcheck="false" required aria-describedby="email-hint email-error">
        <p id="email-error" class="field-error" hidden></p>
      </div>
      <button type="submit" class="primary">${e('sendLink')}</button>
      <p id="email-sent" class="notice" hidden></p>
    </form>
    <p><button type="button" id="passkey-sign-in" class="secondary" hidden>${e('usePasskey')}</button></p>
    <p id="passkey-error" class="field-error" hidden></p>
    <h3 id="key-title">${e('keyTitle')}</h3>
    <form id="sign-in-form" novalidate>
      <p id="sign-in-hint" class="hint">${e('signInHint')}</p>
      <div class="field">
        <label for="api-key">${e('apiKey')}</label>
        <input id="api-key" name="key" type="password" autocomplete="current-password" spellcheck="false" required aria-describedby="sign-in-hint sign-in-error">
        <p id="sign-in-error" class="field-error" hidden></p>
      </div>
      <button type="submit" class="primary">${e('signIn')}</button>
    </form>
  </section>

  <div id="dashboard" hidden>
    <p id="no-merchants" class="notice" hidden>${e('noMerchants')}</p>
    <section id="volume" class="card" aria-labelledby="volume-title">
      <div class="section-head">
        <h2 id="volume-title">${e('volumeTitle')}</h2>
        <div class="field inline">
          <label for="period">${e('period')}</label>
          <select id="period">
            <option value="7">${e('period7')}</option>
            <option value="30" selected>${e('period30')}</option>
            <option value="90">${e('period90')}</option>
          </select>
        </div>
      </div>${table('volume-table', 'volumeTitle', ['currency', 'today', 'periodTotal', 'captured', 'refunded', 'count'], true)}
      <p id="volume-empty" class="muted" hidden>${e('noVolume')}</p>
      <div id="volume-charts" class="charts"></div>
    </section>

    <section id="transactions" class="card" aria-labelledby="transactions-title">
      <h2 id="transactions-title">${e('transactionsTitle')}</h2>
      <form id="filters" role="search" aria-labelledby="transactions-title" novalidate>
        <div class="filters">${field('f-search', 'search', 'type="search" maxlength="100" autocomplete="off"', 'searchHint')}
          <div class="field">
            <label for="f-status">${e('status')}</label>
            <select id="f-status" name="status"><option value="">${e('anyStatus')}</option>${statuses}</select>
          </div>${field('f-currency', 'currency', 'maxlength="3" autocomplete="off" autocapitalize="characters" spellcheck="false" list="currencies"')}${field('f-amount-min', 'amountFrom', 'inputmode="decimal" autocomplete="off"')}${field('f-amount-max', 'amountTo', 'inputmode="decimal" autocomplete="off"')}${field('f-date-from', 'dateFrom', 'type="date"')}${field('f-date-to', 'dateTo', 'type="date"')}${field('f-last4', 'last4', 'inputmode="numeric" maxlength="4" autocomplete="off"')}
        </div>
        <datalist id="currencies"></datalist>
        <p id="filters-error" class="field-error" hidden></p>
        <div class="buttons">
          <button type="submit" class="primary">${e('apply')}</button>
          <button type="reset" class="secondary">${e('reset')}</button>
        </div>
      </form>
      <p id="results" class="muted"></p>${table('tx-table', 'transactionsTitle', ['created', 'amount', 'status', 'card', 'descriptor', 'open'], true)}
      <nav class="pager" aria-label="${e('pagesLabel')}">
        <button type="button" id="newer" class="secondary" disabled>${e('newer')}</button>
        <button type="button" id="older" class="secondary" disabled>${e('older')}</button>
      </nav>
    </section>

    <section id="detail" class="card" aria-labelledby="detail-title" hidden>
      <h2 id="detail-title" tabindex="-1"></h2>
      <dl id="detail-summary" class="summary"></dl>
      <div id="actions" class="buttons">
        <button type="button" id="do-capture" class="primary">${e('capture')}</button>
        <button type="button" id="do-refund" class="primary">${e('refund')}</button>
        <button type="button" id="do-void" class="primary">${e('void')}</button>
      </div>
      <form id="confirm" class="confirm" novalidate hidden>
        <p id="confirm-text"></p>
        <div class="field">
          <label for="confirm-amount" id="confirm-label"></label>
          <input id="confirm-amount" name="amount" inputmode="decimal" autocomplete="off" aria-describedby="confirm-text confirm-error">
          <p id="confirm-error" class="field-error" hidden></p>
        </div>
        <div class="buttons">
          <button type="submit" id="confirm-submit" class="primary"></button>
          <button type="button" id="confirm-cancel" class="secondary">${e('cancel')}</button>
        </div>
      </form>
      <h3>${e('trailTitle')}</h3>${table('trail-table', 'trailTitle', ['kind', 'created', 'amount', 'balanceEffect', 'fee', 'line', 'actor'], true)}
      <h3>${e('linesTitle')}</h3>${table('lines-table', 'linesTitle', ['line', 'created', 'balanceEffect', 'fee', 'amount'], true)}
      <h3>${e('deliveriesTitle')}</h3>${table('deliveries-table', 'deliveriesTitle', ['event', 'created', 'endpoint', 'status', 'attempts', 'response'], true)}
      <p><button type="button" id="detail-close" class="secondary">${e('backToList')}</button></p>
    </section>

    <section id="disputes" class="card" aria-labelledby="disputes-title">
      <h2 id="disputes-title">${e('disputesTitle')}</h2>${table('disputes-table', 'disputes', ['created', 'transaction', 'amount', 'reason', 'due'])}${table('frauds-table', 'frauds', ['created', 'transaction', 'reason', 'reported'])}
    </section>

    <section id="webhooks" class="card" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">${e('webhooksTitle')}</h2>${table('endpoints-table', 'endpoints', ['endpoint', 'events', 'status', 'created'])}${table('failed-table', 'failedDeliveries', ['event', 'created', 'endpoint', 'attempts', 'lastError'])}
    </section>
  </div>
</main>
<script type="application/json" id="dashboard-config">${scriptJson(config)}</script>
</body>
</html>
`
}
