// The transactions list: filters, pages (cursors) and the rows, each opening its transaction.
import { api, query, report } from './api.js'
import { cardText, exponentOf, money, parseMajor, statusLabel, statusOf, when } from './format.js'
import { $, announce, fill, t } from './page.js'
import { state } from './state.js'
import { badge, cell, fillTable, linkButton } from './tables.js'
import { openTransaction } from './transaction-detail.js'

const PAGE_SIZE = 20

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

export async function loadTransactions(cursor) {
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

export function renderTransactions() {
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
