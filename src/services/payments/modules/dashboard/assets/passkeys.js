// "Your passkeys": a merchant user's own passkeys (name, added, last used), each removable after
// a confirmation step. An operator signed in with an app's key has none: the section stays hidden.
import { api, ApiError, report } from './api.js'
import { when } from './format.js'
import { $, announce, fill, show, t } from './page.js'
import { state } from './state.js'
import { cell, fillTable } from './tables.js'

/** The passkey whose removal waits for confirmation, and the button that asked for it. */
let pending = null
/** Counts the loads of the list: an answer from an older load (or session) is dropped. */
let loads = 0

/** Shows the section for a merchant user's session (and loads it), hides it for an app's. */
export function showPasskeys() {
  closeConfirm(false)
  $('passkeys-error').hidden = true
  $('passkeys-table').tBodies[0].textContent = ''
  const forUser = Boolean(state.session && state.session.user)
  show('passkeys', forUser)
  if (forUser) loadPasskeys()
  else loads++
}

export async function loadPasskeys() {
  const load = ++loads
  try {
    const answer = await api('GET', '/dashboard/passkeys')
    if (load !== loads) return
    $('passkeys-error').hidden = true
    renderPasskeys(answer.passkeys)
  } catch (error) {
    if (load === loads) report(error, $('passkeys-error'))
  }
}

function renderPasskeys(passkeys) {
  const rows = passkeys.map(function (passkey) {
    const remove = document.createElement('button')
    remove.type = 'button'
    remove.className = 'secondary'
    remove.textContent = t.removePasskey
    remove.setAttribute('aria-label', fill(t.removePasskeyLabel, { name: passkey.name }))
    remove.addEventListener('click', function () {
      askToRemove(passkey, remove)
    })
    return [cell(passkey.name), cell(when(passkey.created)), cell(passkey.lastUsed ? when(passkey.lastUsed) : t.passkeyNeverUsed), cell(remove)]
  })
  fillTable('passkeys-table', rows, t.noPasskeys)
}

function askToRemove(passkey, button) {
  pending = { passkey: passkey, button: button }
  $('passkey-confirm-text').textContent = fill(t.removePasskeyConfirm, { name: passkey.name })
  show('passkey-confirm', true)
  $('passkey-confirm-submit').focus()
}

function closeConfirm(returnFocus) {
  const button = pending && pending.button
  pending = null
  show('passkey-confirm', false)
  if (returnFocus && button && button.isConnected) button.focus()
}

$('passkey-confirm-cancel').addEventListener('click', function () {
  closeConfirm(true)
})

$('passkey-confirm').addEventListener('keydown', function (event) {
  if (event.key === 'Escape') closeConfirm(true)
})

$('passkey-confirm').addEventListener('submit', async function (event) {
  event.preventDefault()
  if (!pending) return
  const passkey = pending.passkey
  const submit = $('passkey-confirm-submit')
  submit.disabled = true
  try {
    await api('DELETE', '/dashboard/passkeys/' + encodeURIComponent(passkey.id))
    announce(fill(t.passkeyRemoved, { name: passkey.name }))
  } catch (error) {
    // A 404: it is gone already (removed in another tab), which the list below shows.
    if (!(error instanceof ApiError && error.status === 404)) {
      report(error, $('passkeys-error'))
      return
    }
  } finally {
    submit.disabled = false
  }
  closeConfirm(false)
  await loadPasskeys()
  $('passkeys-title').focus()
})
