// Capture, refund and void of the open transaction, each with a confirmation step.
import { api, randomKey } from './api.js'
import { exponentOf, majorText, money, parseMajor } from './format.js'
import { $, announce, fill, show, t } from './page.js'
import { state } from './state.js'
import { closeConfirm, loadTrailDetails, pendingOf, refundableOf, renderDetail } from './transaction-detail.js'
import { renderTransactions } from './transactions.js'
import { loadVolume } from './volume.js'

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
