// Merchant users and their passkeys: signing in with one, and adding one once signed in. The
// ceremonies go through window.TriadWebAuthn (assets/webauthn-json.js, loaded before the modules).
import { enterDashboard } from './account.js'
import { api, ApiError } from './api.js'
import { $, announce, fill, show, t } from './page.js'
import { state } from './state.js'

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
