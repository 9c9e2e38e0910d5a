// One transaction: its summary, its trail, the ledger lines and webhook deliveries of the trail.
// The confirmation form of its actions (transaction-actions.js) closes with it.
import { api, query, report } from './api.js'
import { cardText, money, statusLabel, statusOf, when } from './format.js'
import { $, fill, show, t } from './page.js'
import { state } from './state.js'
import { badge, cell, codeText, fillTable } from './tables.js'
import { endpointName } from './webhooks.js'

export async function openTransaction(id) {
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

export function pendingOf(transaction) {
  return transaction.amount - transaction.capturedAmount - transaction.voidedAmount
}

export function refundableOf(transaction) {
  return transaction.capturedAmount - transaction.refundedAmount
}

export function renderDetail() {
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

/** The ledger lines of the trail and the webhook deliveries of the transaction's events. */
export async function loadTrailDetails() {
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

export function closeDetail(refocus) {
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

export function closeConfirm() {
  state.action = null
  show('confirm', false)
}
