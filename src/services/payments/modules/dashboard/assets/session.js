// Signed out: the sign-in form in place of the dashboard, with the reason when a session ended.
import { $, announce, show, t } from './page.js'
import { state } from './state.js'

export function showSignIn(message) {
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

export function sessionEnded() {
  showSignIn(t.errSessionEnded)
}
