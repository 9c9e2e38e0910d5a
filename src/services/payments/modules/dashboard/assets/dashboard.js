// The merchant dashboard's script: signs in (a merchant user by an e-mailed link, an operator
// with an app's key: POST /dashboard/session), then reads and moves
// money through the merchant API on this origin with the session cookie, sending the CSRF token
// on every change. No framework, no external requests; every text comes from the page's
// configuration, every value is inserted as text (never as HTML).
;(function () {
  'use strict'

  const config = JSON.parse(document.getElementById('dashboard-config').textContent)
  const t = config.messages
  const PAGE_SIZE = 20
  const DAY_MS = 86400000

  const state = {
    session: null,
    merchant: null,
    merchants: [],
    rows: [],
    pageIndex: 0,
    query: {},
    current: null,
    action: null,
    idempotencyKey: null,
    /** Counts the loads of a transaction's details: an answer from an older load is dropped. */
    detailLoad: 0,
    endpoints: new Map(),
    currencies: new Map(),
    /** The token of a sign-in link this page was opened with, until it is used. */
    linkToken: null,
  }

  function $(id) {
    return document.getElementById(id)
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole
    })
  }

  function announce(text) {
    // Cleared first, so the same words said twice are announced twice.
    $('live').textContent = ''
    window.setTimeout(function () {
      $('live').textContent = text
    }, 30)
  }

  function show(id, visible) {
    $(id).hidden = !visible
  }

  // ----- formatting -------------------------------------------------------------------------

  function exponentOf(currency) {
    const exponent = config.exponents[currency]
    return typeof exponent === 'number' ? exponent : 2
  }

  function money(minor, currency) {
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
  function parseMajor(text, currency) {
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
  function majorText(minor, currency) {
    const exponent = exponentOf(currency)
    const text = (minor / Math.pow(10, exponent)).toFixed(exponent)
    return config.lang === 'da' ? text.replace('.', ',') : text
  }

  const dateTime = new Intl.DateTimeFormat(config.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
  const dayFormat = new Intl.DateTimeFormat(config.locale, { dateStyle: 'medium', timeZone: 'UTC' })

  function when(iso) {
    return iso ? dateTime.format(new Date(iso)) + ' UTC' : '–'
  }

  function dayText(day) {
    return dayFormat.format(new Date(day + 'T00:00:00Z'))
  }

  /** The status a transaction is listed under; the same order as the list's filter[status]. */
  function statusOf(transaction) {
    if (!transaction.successful) return 'declined'
    if (transaction.refundedAmount > 0) return 'refunded'
    if (transaction.capturedAmount > 0) return 'captured'
    if (transaction.voidedAmount === transaction.amount) return 'voided'
    return 'authorized'
  }

  function statusLabel(status) {
    return t['status' + status.charAt(0).toUpperCase() + status.slice(1)] || status
  }

  // ----- the merchant API -------------------------------------------------------------------

  function ApiError(status, message, body) {
    this.status = status
    this.message = message
    this.body = body
  }

  function errorText(body, status) {
    if (Array.isArray(body))
      return body
        .map(function (problem) {
          return problem.field + ' ' + problem.message
        })
        .join('; ')
    if (body && typeof body.message === 'string') return body.message
    return 'HTTP ' + status
  }

  function randomKey() {
    const bytes = new Uint8Array(16)
    window.crypto.getRandomValues(bytes)
    return Array.from(bytes, function (byte) {
      return byte.toString(16).padStart(2, '0')
    }).join('')
  }

  async function api(method, path, body, headers) {
    const sent = Object.assign({ accept: 'application/json' }, headers || {})
    if (body !== undefined) sent['content-type'] = 'application/json'
    if (method !== 'GET' && state.session) sent['x-csrf-token'] = state.session.csrfToken
    let response
    try {
      response = await fetch(path, { method: method, headers: sent, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' })
    } catch (error) {
      throw new ApiError(0, t.errNetwork)
    }
    const text = await response.text()
    let data
    try {
      data = text ? JSON.parse(text) : undefined
    } catch (error) {
      data = undefined
    }
    if (!response.ok) {
      const failure = new ApiError(response.status, errorText(data, response.status), data)
      if (response.status === 401 && state.session && path.indexOf('/dashboard/session') !== 0) sessionEnded()
      throw failure
    }
    return data
  }

  function query(params) {
    const search = new URLSearchParams()
    Object.keys(params).forEach(function (name) {
      if (params[name] !== undefined && params[name] !== null && params[name] !== '') search.set(name, params[name])
    })
    return search.toString()
  }

  /** Shows a failure where the person is looking, and says it. */
  function report(error, target) {
    // A 401 has already taken the person back to the sign-in form, which says why.
    if (error instanceof ApiError && error.status === 401) return
    const text = error instanceof ApiError && error.status === 0 ? t.errNetwork : fill(t.errGeneric, { message: error.message })
    if (target) {
      target.textContent = text
      target.hidden = false
    }
    announce(text)
  }

  // ----- tables -----------------------------------------------------------------------------

  function cell(content, options) {
    const td = document.createElement('td')
    if (content instanceof Node) td.appendChild(content)
    else td.textContent = content === undefined || content === null || content === '' ? '–' : String(content)
    if (options && options.num) td.className = 'num'
    return td
  }

  function badge(kind, text) {
    const span = document.createElement('span')
    span.className = 'status ' + kind
    span.textContent = text
    return span
  }

  function linkButton(text, label, onClick) {
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'link'
    button.textContent = text
    if (label) button.setAttribute('aria-label', label)
    button.addEventListener('click', onClick)
    return button
  }

  /** Fills a table's body; every cell carries its column name for the stacked phone layout. */
  function fillTable(id, rows, emptyText) {
    const table = $(id)
    const body = table.tBodies[0]
    const headings = Array.from(table.tHead.rows[0].cells, function (th) {
      return th.textContent
    })
    table.classList.add('stack')
    body.textContent = ''
    if (rows.length === 0) {
      const tr = document.createElement('tr')
      const td = cell(emptyText)
      td.colSpan = headings.length
      tr.appendChild(td)
      body.appendChild(tr)
      return
    }
    rows.forEach(function (cells) {
      const tr = document.createElement('tr')
      cells.forEach(function (td, index) {
        td.setAttribute('data-label', headings[index] || '')
        tr.appendChild(td)
      })
      body.appendChild(tr)
    })
  }

  // ----- signing in and out -----------------------------------------------------------------

  function showSignIn(message) {
    state.session = null
    state.merchant = null
    show('dashboard', false)
    show('account', false)
    show('sign-in', true)
    show('link-landing', state.linkToken !== null)
    const error = $('sign-in-error')
    error.hidden = !message
    error.textContent = message || ''
    if (message) announce(message)
    if (state.linkToken !== null) $('follow-link').focus()
    else $('email').focus()
  }

  // ----- merchant users: passkeys (assets/webauthn-json.js) ---------------------------------

  function passkeyFailure(failure, refusedText) {
    if (failure && failure.name === 'NotAllowedError') return t.errPasskeyCancelled
    if (failure instanceof ApiError) return failure.status === 401 ? refusedText : failure.status === 0 ? t.errNetwork : fill(t.errGeneric, { message: failure.message })
    return fill(t.errGeneric, { message: failure && failure.message })
  }

  show('passkey-sign-in', window.TriadWebAuthn.supported)
  $('passkey-sign-in').addEventListener('click', async function () {
    const error = $('passkey-error')
    error.hidden = true
    try {
      const options = await api('POST', '/dashboard/passkeys/login/options')
      const credential = await window.TriadWebAuthn.get(options)
      const answer = await api('POST', '/dashboard/session/passkey', { credential: credential })
      state.session = answer.session
      await enterDashboard()
    } catch (failure) {
      error.textContent = passkeyFailure(failure, t.errPasskeyRefused)
      error.hidden = false
      announce(error.textContent)
    }
  })

  $('add-passkey').addEventListener('click', async function () {
    try {
      const options = await api('POST', '/dashboard/passkeys/registration/options')
      const credential = await window.TriadWebAuthn.create(options)
      await api('POST', '/dashboard/passkeys', { credential: credential })
      announce(t.passkeyAdded)
    } catch (failure) {
      // A 401 has already taken the person back to the sign-in form.
      if (!(failure instanceof ApiError && failure.status === 401)) announce(passkeyFailure(failure, t.errSessionEnded))
    }
  })

  // ----- merchant users: a sign-in link by e-mail -------------------------------------------

  /** Shows a field's error next to it and says it; `null` clears it. */
  function fieldError(input, error, text) {
    error.hidden = !text
    error.textContent = text || ''
    if (text) {
      input.setAttribute('aria-invalid', 'true')
      announce(text)
      input.focus()
    } else input.removeAttribute('aria-invalid')
  }

  $('email-form').addEventListener('submit', async function (event) {
    event.preventDefault()
    const input = $('email')
    const email = input.value.trim()
    show('email-sent', false)
    if (!email) return fieldError(input, $('email-error'), t.errEmailMissing)
    fieldError(input, $('email-error'), null)
    try {
      const answer = await api('POST', '/dashboard/sign-in-link', { email: email, lang: config.lang })
      const sent = $('email-sent')
      sent.textContent = fill(t.linkSent, { email: email, minutes: answer.linkLifetimeMinutes })
      sent.hidden = false
      announce(sent.textContent)
    } catch (failure) {
      const text = failure.status === 400 ? t.errEmailInvalid : failure.status === 429 ? t.errTooMany : failure.status === 0 ? t.errNetwork : fill(t.errGeneric, { message: failure.message })
      fieldError(input, $('email-error'), text)
    }
  })

  // The link's token comes in the fragment (never sent to a server); it is taken out of the
  // address bar and the history at once, and used only when the person chooses to continue.
  function takeLinkToken() {
    const match = /^#sign-in=([A-Za-z0-9_-]{20,200})$/.exec(window.location.hash)
    if (!match) return false
    state.linkToken = match[1]
    window.history.replaceState(null, '', window.location.pathname + window.location.search)
    return true
  }
  takeLinkToken()
  // A link opened in a tab already showing the dashboard changes only the fragment.
  window.addEventListener('hashchange', function () {
    if (takeLinkToken()) showSignIn()
  })

  $('follow-link').addEventListener('click', async function () {
    const token = state.linkToken
    state.linkToken = null
    show('link-landing', false)
    try {
      const answer = await api('POST', '/dashboard/session/link', { token: token })
      state.session = answer.session
      await enterDashboard()
    } catch (failure) {
      const text = failure.status === 401 ? t.errLinkInvalid : failure.status === 0 ? t.errNetwork : fill(t.errGeneric, { message: failure.message })
      const error = $('link-error')
      error.textContent = text
      error.hidden = false
      announce(text)
      $('email').focus()
    }
  })

  function sessionEnded() {
    showSignIn(t.errSessionEnded)
  }

  $('sign-in-form').addEventListener('submit', async function (event) {
    event.preventDefault()
    const input = $('api-key')
    const error = $('sign-in-error')
    const key = input.value.trim()
    error.hidden = true
    input.removeAttribute('aria-invalid')
    if (!key) {
      input.setAttribute('aria-invalid', 'true')
      error.textContent = t.errKeyMissing
      error.hidden = false
      announce(t.errKeyMissing)
      input.focus()
      return
    }
    try {
      const answer = await api('POST', '/dashboard/session', { key: key })
      input.value = ''
      state.session = answer.session
      await enterDashboard()
    } catch (failure) {
      input.setAttribute('aria-invalid', 'true')
      error.textContent = failure.status === 401 ? t.errKeyUnknown : failure.status === 0 ? t.errNetwork : fill(t.errGeneric, { message: failure.message })
      error.hidden = false
      announce(error.textContent)
      input.focus()
    }
  })

  $('sign-out').addEventListener('click', async function () {
    try {
      await api('DELETE', '/dashboard/session')
    } catch (error) {
      // Signed out either way: the session is gone or already ended.
    }
    showSignIn()
    announce(t.signedOut)
  })

  async function enterDashboard() {
    show('sign-in', false)
    show('account', true)
    show('dashboard', true)
    $('link-error').hidden = true
    $('who').textContent = fill(t.signedInAs, { who: whoText(state.session) })
    show('add-passkey', Boolean(state.session.user) && window.TriadWebAuthn.supported)
    $('no-merchants').textContent = state.session.user ? t.noMerchantsUser : t.noMerchants
    const merchants = await api('GET', '/identities/' + encodeURIComponent(identityOf(state.session)) + '/merchants?' + query({ limit: 100 }))
    state.merchants = merchants
    const select = $('merchant')
    select.textContent = ''
    merchants.forEach(function (merchant) {
      const option = document.createElement('option')
      option.value = merchant.id
      option.textContent = (merchant.name || merchant.descriptor || merchant.id) + (merchant.test ? ' (' + t.testMerchant + ')' : '')
      select.appendChild(option)
    })
    show('no-merchants', merchants.length === 0)
    if (merchants.length === 0) return
    await loadMerchant(merchants[0].id)
    $('main').focus()
  }

  /** Who the session signs in as: the merchant user, or the app (an operator with its key). */
  function identityOf(session) {
    return session.user ? session.user.id : session.app.id
  }

  function whoText(session) {
    return session.user ? session.user.email : fill(t.appNamed, { name: session.app.name || session.app.id })
  }

  $('merchant').addEventListener('change', function (event) {
    loadMerchant(event.target.value)
  })

  async function loadMerchant(id) {
    state.merchant = state.merchants.find(function (merchant) {
      return merchant.id === id
    })
    closeDetail(false)
    await Promise.all([loadVolume(), loadWebhooks()])
    await Promise.all([loadTransactions({}), loadDisputes()])
  }

  // ----- volume -----------------------------------------------------------------------------

  $('period').addEventListener('change', function () {
    loadVolume()
  })

  async function loadVolume() {
    const days = Number($('period').value)
    const to = config.today
    const from = new Date(Date.parse(to + 'T00:00:00Z') - (days - 1) * DAY_MS).toISOString().slice(0, 10)
    let volume
    try {
      volume = (await api('GET', '/merchants/' + state.merchant.id + '/volume?' + query({ from: from, to: to }))).volume
    } catch (error) {
      report(error)
      return
    }
    volume.currencies.forEach(function (entry) {
      state.currencies.set(entry.currency, entry.exponent)
    })
    const list = $('currencies')
    list.textContent = ''
    new Set([state.merchant.currency].concat(Array.from(state.currencies.keys()))).forEach(function (code) {
      const option = document.createElement('option')
      option.value = code
      list.appendChild(option)
    })
    fillTable(
      'volume-table',
      volume.currencies.map(function (entry) {
        return [
          cell(entry.currency),
          cell(money(entry.today.authorized, entry.currency), { num: true }),
          cell(money(entry.authorized, entry.currency), { num: true }),
          cell(money(entry.captured, entry.currency), { num: true }),
          cell(money(entry.refunded, entry.currency), { num: true }),
          cell(entry.count, { num: true }),
        ]
      }),
      t.noVolume,
    )
    const charts = $('volume-charts')
    charts.textContent = ''
    volume.currencies.forEach(function (entry) {
      charts.appendChild(chart(entry, volume))
    })
  }

  const SVG = 'http://www.w3.org/2000/svg'

  function svg(name, attributes, text) {
    const element = document.createElementNS(SVG, name)
    Object.keys(attributes).forEach(function (key) {
      element.setAttribute(key, String(attributes[key]))
    })
    if (text !== undefined) element.textContent = text
    return element
  }

  /** One currency's authorized amount per day as bars; today's bar in its own colour. Drawn, not loaded. */
  function chart(entry, volume) {
    const width = 480
    const height = 180
    const top = 20
    const bottom = 24
    const figure = document.createElement('figure')
    figure.className = 'chart'
    const caption = document.createElement('figcaption')
    const captionId = 'chart-' + entry.currency
    caption.id = captionId
    caption.textContent = entry.currency
    figure.appendChild(caption)
    const label = fill(t.chartLabel, {
      currency: entry.currency,
      from: dayText(volume.from),
      to: dayText(volume.to),
      total: money(entry.authorized, entry.currency),
      today: money(entry.today.authorized, entry.currency),
    })
    const drawing = svg('svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': label, focusable: 'false' })
    const max = Math.max.apply(
      null,
      entry.days.map(function (day) {
        return day.authorized
      }).concat([1]),
    )
    const slot = (width - 16) / entry.days.length
    const barWidth = Math.max(1, slot * 0.8)
    drawing.appendChild(svg('line', { x1: 8, x2: width - 8, y1: height - bottom, y2: height - bottom, stroke: '#5b6670', 'stroke-width': 1 }))
    entry.days.forEach(function (day, index) {
      const barHeight = ((height - top - bottom) * day.authorized) / max
      const rect = svg('rect', {
        x: (8 + index * slot + (slot - barWidth) / 2).toFixed(2),
        y: (height - bottom - barHeight).toFixed(2),
        width: barWidth.toFixed(2),
        height: barHeight.toFixed(2),
        fill: day.date === volume.today ? '#8a3b00' : '#0b4f8a',
      })
      rect.appendChild(svg('title', {}, dayText(day.date) + ': ' + money(day.authorized, entry.currency) + ' (' + day.count + ')'))
      drawing.appendChild(rect)
    })
    drawing.appendChild(svg('text', { x: 8, y: 14, fill: '#4a5560', 'font-size': 12 }, money(max === 1 ? 0 : max, entry.currency)))
    drawing.appendChild(svg('text', { x: 8, y: height - 6, fill: '#4a5560', 'font-size': 12 }, dayText(volume.from)))
    drawing.appendChild(svg('text', { x: width - 8, y: height - 6, fill: '#4a5560', 'font-size': 12, 'text-anchor': 'end' }, dayText(volume.to)))
    figure.appendChild(drawing)
    const legend = document.createElement('p')
    legend.className = 'legend'
    legend.textContent = t.periodTotal + ': ' + money(entry.authorized, entry.currency) + ' · ' + t.chartToday + ': ' + money(entry.today.authorized, entry.currency)
    figure.appendChild(legend)
    return figure
  }

  // ----- transactions -----------------------------------------------------------------------

  /** The filters as the merchant API takes them, or a message for the person (and the field to fix). */
  function readFilters() {
    const problem = function (message, field) {
      return { problem: message, field: field }
    }
    const filters = {}
    const search = $('f-search').value.trim()
    if (search) filters['filter[search]'] = search
    if ($('f-status').value) filters['filter[status]'] = $('f-status').value
    const currency = $('f-currency').value.trim().toUpperCase()
    if (currency) filters['filter[currency]'] = currency
    const bounds = [
      ['f-amount-min', 'filter[amountMin]'],
      ['f-amount-max', 'filter[amountMax]'],
    ]
    for (const [id, name] of bounds) {
      const text = $(id).value.trim()
      if (!text) continue
      if (!currency) return problem(t.errAmountCurrency, 'f-currency')
      const minor = parseMajor(text, currency)
      if (minor === null) return problem(fill(t.errAmountFilter, { decimals: exponentOf(currency) }), id)
      filters[name] = minor
    }
    if ($('f-date-from').value) filters['filter[createdFrom]'] = $('f-date-from').value
    if ($('f-date-to').value) filters['filter[createdTo]'] = $('f-date-to').value
    const last4 = $('f-last4').value.trim()
    if (last4) {
      if (!/^\d{4}$/.test(last4)) return problem(t.errLast4, 'f-last4')
      filters['filter[last4]'] = last4
    }
    return { filters: filters }
  }

  $('filters').addEventListener('submit', function (event) {
    event.preventDefault()
    const error = $('filters-error')
    Array.from($('filters').querySelectorAll('[aria-invalid]')).forEach(function (input) {
      input.removeAttribute('aria-invalid')
    })
    const read = readFilters()
    if (read.problem) {
      error.textContent = read.problem
      error.hidden = false
      $(read.field).setAttribute('aria-invalid', 'true')
      $(read.field).setAttribute('aria-errormessage', 'filters-error')
      $(read.field).focus()
      announce(read.problem)
      return
    }
    error.hidden = true
    state.query = read.filters
    state.pageIndex = 0
    loadTransactions({})
  })

  $('filters').addEventListener('reset', function () {
    $('filters-error').hidden = true
    state.query = {}
    state.pageIndex = 0
    window.setTimeout(function () {
      loadTransactions({})
    }, 0)
  })

  $('older').addEventListener('click', function () {
    const last = state.rows[state.rows.length - 1]
    if (!last) return
    state.pageIndex += 1
    loadTransactions({ before: last.id })
  })

  $('newer').addEventListener('click', function () {
    const first = state.rows[0]
    if (!first) return
    state.pageIndex = Math.max(0, state.pageIndex - 1)
    loadTransactions(state.pageIndex === 0 ? {} : { after: first.id })
  })

  async function loadTransactions(cursor) {
    const params = Object.assign({ limit: PAGE_SIZE }, state.query, cursor)
    let rows
    try {
      rows = await api('GET', '/merchants/' + state.merchant.id + '/transactions?' + query(params))
    } catch (error) {
      report(error, $('filters-error'))
      return
    }
    // `after` alone lists oldest first: the page is shown newest first like every other.
    if (cursor.after) rows.reverse()
    state.rows = rows
    renderTransactions()
    $('newer').disabled = state.pageIndex === 0
    $('older').disabled = rows.length < PAGE_SIZE
    const text = rows.length === 0 ? t.resultsNone : fill(t.resultsCount, { count: rows.length })
    $('results').textContent = text
    announce(text)
  }

  function cardText(card) {
    return card ? card.scheme + ' ' + card.bin + '…' + card.last4 : '–'
  }

  function renderTransactions() {
    fillTable(
      'tx-table',
      state.rows.map(function (transaction) {
        const status = statusOf(transaction)
        return [
          cell(when(transaction.created)),
          cell(money(transaction.amount, transaction.currency), { num: true }),
          cell(badge(status, statusLabel(status))),
          cell(cardText(transaction.card)),
          cell(transaction.descriptor),
          cell(
            linkButton(transaction.id.slice(-8), fill(t.openTransaction, { id: transaction.id }), function () {
              openTransaction(transaction.id)
            }),
          ),
        ]
      }),
      t.resultsNone,
    )
  }

  // ----- one transaction --------------------------------------------------------------------

  async function openTransaction(id) {
    let transaction
    try {
      transaction = (await api('GET', '/transactions/' + encodeURIComponent(id))).transaction
    } catch (error) {
      report(error)
      return
    }
    state.current = transaction
    closeConfirm()
    // What another (or an earlier) view of a transaction showed goes before anything is read.
    $('lines-table').tBodies[0].textContent = ''
    $('deliveries-table').tBodies[0].textContent = ''
    renderDetail()
    show('detail', true)
    $('detail-title').focus()
    await loadTrailDetails()
  }

  function summaryItem(list, label, value) {
    const wrapper = document.createElement('div')
    const dt = document.createElement('dt')
    dt.textContent = label
    const dd = document.createElement('dd')
    if (value instanceof Node) dd.appendChild(value)
    else dd.textContent = value === undefined || value === null || value === '' ? '–' : String(value)
    wrapper.appendChild(dt)
    wrapper.appendChild(dd)
    list.appendChild(wrapper)
  }

  function pendingOf(transaction) {
    return transaction.amount - transaction.capturedAmount - transaction.voidedAmount
  }

  function refundableOf(transaction) {
    return transaction.capturedAmount - transaction.refundedAmount
  }

  function renderDetail() {
    const transaction = state.current
    const currency = transaction.currency
    const status = statusOf(transaction)
    $('detail-title').textContent = fill(t.detailTitle, { id: transaction.id })
    const list = $('detail-summary')
    list.textContent = ''
    summaryItem(list, t.status, badge(status, statusLabel(status)))
    summaryItem(list, t.created, when(transaction.created))
    summaryItem(list, t.amount, money(transaction.amount, currency))
    summaryItem(list, t.pending, money(pendingOf(transaction), currency))
    summaryItem(list, t.captured, money(transaction.capturedAmount, currency))
    summaryItem(list, t.refunded, money(transaction.refundedAmount, currency))
    summaryItem(list, t.statusVoided, money(transaction.voidedAmount, currency))
    summaryItem(list, t.card, cardText(transaction.card))
    summaryItem(list, t.tds, transaction.tds === 'full' ? t.tdsFull : transaction.tds === 'attempt' ? t.tdsAttempt : t.tdsNone)
    summaryItem(list, t.recurring, transaction.recurring ? t.yes : t.no)
    summaryItem(list, t.descriptor, transaction.descriptor)
    if (transaction.error) summaryItem(list, t.error, transaction.error.message)
    $('do-capture').disabled = !transaction.successful || pendingOf(transaction) <= 0
    $('do-void').disabled = !transaction.successful || pendingOf(transaction) <= 0
    $('do-refund').disabled = !transaction.successful || refundableOf(transaction) <= 0
    const merchantCurrency = state.merchant.currency
    const trail = [
      [cell(t.kindAuthorization), cell(when(transaction.created)), cell(money(transaction.amount, currency), { num: true }), cell(''), cell(''), cell(''), cell('')],
    ].concat(
      transaction.trail.map(function (entry) {
        const kind = entry.capture ? t.kindCapture : entry.refund ? t.kindRefund : entry.void ? t.kindVoid : t.kindDispute
        return [
          cell(kind),
          cell(when(entry.created)),
          cell(money(entry.amount, currency), { num: true }),
          cell(entry.void ? '' : money(entry.balance, merchantCurrency), { num: true }),
          cell(entry.void ? '' : money(entry.fee.flat + entry.fee.rate, merchantCurrency), { num: true }),
          cell(entry.lineId ? codeText(entry.lineId) : ''),
          cell(actorText(entry.actor)),
        ]
      }),
    )
    fillTable('trail-table', trail, '')
  }

  /** Who made a trail entry: a merchant user's e-mail, or the app (by its id). */
  function actorText(actor) {
    if (!actor) return ''
    return actor.type === 'user' ? actor.email : fill(t.appNamed, { name: actor.id })
  }

  function codeText(text) {
    const code = document.createElement('code')
    code.textContent = text
    return code
  }

  /** The ledger lines of the trail and the webhook deliveries of the transaction's events. */
  async function loadTrailDetails() {
    const transaction = state.current
    const load = ++state.detailLoad
    const current = function () {
      return load === state.detailLoad
    }
    const lineIds = transaction.trail
      .map(function (entry) {
        return entry.lineId
      })
      .filter(Boolean)
    try {
      const lines = await Promise.all(
        lineIds.map(function (id) {
          return api('GET', '/lines/' + encodeURIComponent(id))
        }),
      )
      if (!current()) return
      fillTable(
        'lines-table',
        lines.map(function (answer) {
          const line = answer.line
          return [
            cell(codeText(line.id)),
            cell(when(line.created)),
            cell(money(line.balance, state.merchant.currency), { num: true }),
            cell(money(line.fee, state.merchant.currency), { num: true }),
            cell(line.amount ? money(line.amount.amount, line.amount.currency) : '', { num: true }),
          ]
        }),
        t.noLines,
      )
      const events = await api('GET', '/merchants/' + state.merchant.id + '/events?' + query({ limit: 50, 'filter[transactionId]': transaction.id }))
      if (!current()) return
      const rows = []
      events.forEach(function (event) {
        if (event.deliveries.length === 0) rows.push([cell(event.type), cell(when(event.created)), cell(t.notSent), cell(''), cell(''), cell('')])
        event.deliveries.forEach(function (delivery) {
          const last = delivery.attempts[delivery.attempts.length - 1]
          rows.push([
            cell(event.type),
            cell(when(event.created)),
            cell(endpointName(delivery.webhookId)),
            cell(badge(delivery.status, delivery.status)),
            cell(delivery.attempts.length, { num: true }),
            cell(last ? (last.responseCode !== undefined ? 'HTTP ' + last.responseCode : last.error) + ' · ' + last.latency + ' ms' : ''),
          ])
        })
      })
      fillTable('deliveries-table', rows, t.noDeliveries)
    } catch (error) {
      report(error)
    }
  }

  function endpointName(id) {
    const endpoint = state.endpoints.get(id)
    return endpoint ? endpoint.url : id
  }

  function closeDetail(refocus) {
    const id = state.current && state.current.id
    state.current = null
    closeConfirm()
    show('detail', false)
    if (refocus && id) {
      const button = Array.from($('tx-table').querySelectorAll('button')).find(function (candidate) {
        return candidate.getAttribute('aria-label') === fill(t.openTransaction, { id: id })
      })
      ;(button || $('tx-table').parentElement).focus()
    }
  }

  $('detail-close').addEventListener('click', function () {
    closeDetail(true)
  })

  // ----- capture, refund, void with a confirmation step -------------------------------------

  const ACTIONS = {
    capture: { path: 'captures', confirm: 'confirmCapture', done: 'doneCapture', max: pendingOf },
    refund: { path: 'refunds', confirm: 'confirmRefund', done: 'doneRefund', max: refundableOf },
    void: { path: 'voids', confirm: 'confirmVoid', done: 'doneVoid', max: pendingOf },
  }

  function openConfirm(kind) {
    const transaction = state.current
    const action = ACTIONS[kind]
    const max = action.max(transaction)
    state.action = kind
    // One key per confirmation: a second click or a retry after a lost answer is not a second capture.
    state.idempotencyKey = randomKey()
    $('confirm-text').textContent = fill(t[action.confirm], { id: transaction.id, max: money(max, transaction.currency) })
    $('confirm-label').textContent = fill(t.amountIn, { currency: transaction.currency })
    $('confirm-submit').textContent = fill(t.confirm, { action: t[kind].toLowerCase() })
    const input = $('confirm-amount')
    input.value = majorText(max, transaction.currency)
    input.removeAttribute('aria-invalid')
    $('confirm-error').hidden = true
    show('confirm', true)
    input.focus()
    input.select()
  }

  function closeConfirm() {
    state.action = null
    show('confirm', false)
  }

  Object.keys(ACTIONS).forEach(function (kind) {
    $('do-' + kind).addEventListener('click', function () {
      openConfirm(kind)
    })
  })

  $('confirm-cancel').addEventListener('click', function () {
    const kind = state.action
    closeConfirm()
    if (kind) $('do-' + kind).focus()
  })

  $('confirm').addEventListener('keydown', function (event) {
    if (event.key === 'Escape') $('confirm-cancel').click()
  })

  $('confirm').addEventListener('submit', async function (event) {
    event.preventDefault()
    const transaction = state.current
    const kind = state.action
    if (!transaction || !kind) return
    const action = ACTIONS[kind]
    const max = action.max(transaction)
    const input = $('confirm-amount')
    const error = $('confirm-error')
    const amount = parseMajor(input.value, transaction.currency)
    if (amount === null || amount <= 0 || amount > max) {
      error.textContent = fill(t.errAmount, { max: money(max, transaction.currency), decimals: exponentOf(transaction.currency) })
      error.hidden = false
      input.setAttribute('aria-invalid', 'true')
      announce(error.textContent)
      input.focus()
      return
    }
    const submit = $('confirm-submit')
    submit.disabled = true
    try {
      const answer = await api('POST', '/transactions/' + encodeURIComponent(transaction.id) + '/' + action.path, { amount: amount, currency: transaction.currency }, {
        'idempotency-key': state.idempotencyKey,
      })
      state.current = answer.transaction
      closeConfirm()
      renderDetail()
      announce(fill(t[action.done], { amount: money(amount, transaction.currency) }))
      if ($('do-' + kind).disabled) $('detail-title').focus()
      else $('do-' + kind).focus()
      state.rows = state.rows.map(function (row) {
        return row.id === answer.transaction.id ? answer.transaction : row
      })
      renderTransactions()
      await Promise.all([loadTrailDetails(), loadVolume()])
    } catch (failure) {
      error.textContent = failure.status === 0 ? t.errNetwork : failure.message
      error.hidden = false
      input.setAttribute('aria-invalid', 'true')
      announce(error.textContent)
      input.focus()
    } finally {
      submit.disabled = false
    }
  })

  // ----- disputes, fraud alerts, webhooks ---------------------------------------------------

  async function currencyOfTransactions(ids) {
    const known = new Map()
    state.rows.forEach(function (row) {
      known.set(row.id, row.currency)
    })
    const missing = Array.from(new Set(ids)).filter(function (id) {
      return !known.has(id)
    })
    const fetched = await Promise.all(
      missing.map(function (id) {
        return api('GET', '/transactions/' + encodeURIComponent(id))
      }),
    )
    fetched.forEach(function (answer) {
      known.set(answer.transaction.id, answer.transaction.currency)
    })
    return known
  }

  function transactionButton(id) {
    return linkButton(id.slice(-8), fill(t.openTransaction, { id: id }), function () {
      openTransaction(id)
    })
  }

  async function loadDisputes() {
    const filter = { limit: 20, 'filter[merchantId]': state.merchant.id }
    try {
      const [disputes, frauds] = await Promise.all([api('GET', '/disputes?' + query(filter)), api('GET', '/frauds?' + query(filter))])
      const currencies = await currencyOfTransactions(
        disputes.map(function (dispute) {
          return dispute.transactionId
        }),
      )
      fillTable(
        'disputes-table',
        disputes.map(function (dispute) {
          const outcome = dispute.won ? ' ✓' : dispute.lost ? ' ✗' : ''
          return [
            cell(when(dispute.created)),
            cell(transactionButton(dispute.transactionId)),
            cell(money(dispute.amount, currencies.get(dispute.transactionId) || state.merchant.currency), { num: true }),
            cell(dispute.reason.title + outcome),
            cell(when(dispute.due)),
          ]
        }),
        t.noDisputes,
      )
      fillTable(
        'frauds-table',
        frauds.map(function (fraud) {
          return [cell(when(fraud.created)), cell(transactionButton(fraud.transactionId)), cell(fraud.reason), cell(when(fraud.reported))]
        }),
        t.noFrauds,
      )
    } catch (error) {
      report(error)
    }
  }

  async function loadWebhooks() {
    try {
      const [endpoints, failed] = await Promise.all([
        api('GET', '/merchants/' + state.merchant.id + '/webhooks?' + query({ limit: 50 })),
        api('GET', '/merchants/' + state.merchant.id + '/events?' + query({ limit: 20, 'filter[deliveryStatus]': 'failed' })),
      ])
      state.endpoints = new Map(
        endpoints.map(function (endpoint) {
          return [endpoint.id, endpoint]
        }),
      )
      fillTable(
        'endpoints-table',
        endpoints.map(function (endpoint) {
          let status = endpoint.status === 'enabled' ? t.enabled : fill(t.disabled, { reason: endpoint.disabledReason || '' })
          if (endpoint.failingSince) status += ' (' + fill(t.failingSince, { date: when(endpoint.failingSince) }) + ')'
          return [cell(codeText(endpoint.url)), cell(endpoint.events.join(', ')), cell(badge(endpoint.status, status)), cell(when(endpoint.created))]
        }),
        fill(t.noEndpoints, { id: state.merchant.id }),
      )
      const rows = []
      failed.forEach(function (event) {
        event.deliveries
          .filter(function (delivery) {
            return delivery.status === 'failed'
          })
          .forEach(function (delivery) {
            rows.push([cell(event.type + ' ' + event.id), cell(when(event.created)), cell(endpointName(delivery.webhookId)), cell(delivery.attempts.length, { num: true }), cell(delivery.lastError)])
          })
      })
      fillTable('failed-table', rows, t.noFailed)
    } catch (error) {
      report(error)
    }
  }

  // ----- start ------------------------------------------------------------------------------

  const signedIn = state.linkToken !== null ? Promise.reject(new Error('a sign-in link to follow')) : api('GET', '/dashboard/session')
  signedIn
    .then(function (answer) {
      state.session = answer.session
      return enterDashboard()
    })
    .catch(function (error) {
      if (state.session) report(error)
      else showSignIn()
    })
})()
