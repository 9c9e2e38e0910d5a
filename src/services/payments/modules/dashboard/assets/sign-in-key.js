// Operators: signing in with the API key of an app (POST /dashboard/session).
import { enterDashboard } from './account.js'
import { api } from './api.js'
import { $, announce, fill, t } from './page.js'
import { state } from './state.js'

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
