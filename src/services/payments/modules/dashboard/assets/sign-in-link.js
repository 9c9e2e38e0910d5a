// Merchant users: a one-time sign-in link by e-mail, asked for here and followed from the page
// it opens (its token in the fragment).
import { enterDashboard } from './account.js'
import { api } from './api.js'
import { $, announce, config, fill, show, t } from './page.js'
import { showSignIn } from './session.js'
import { state } from './state.js'

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
