// The merchant's disputes and fraud alerts, each row opening its transaction.
import { api, query, report } from './api.js'
import { money, when } from './format.js'
import { fill, t } from './page.js'
import { state } from './state.js'
import { cell, fillTable, linkButton } from './tables.js'
import { openTransaction } from './transaction-detail.js'

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

export async function loadDisputes() {
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
