// The merchant API on this origin, called with the session cookie: the CSRF token on every
// change, a 401 ends the session on the page, failures shown where the person is looking.
import { announce, fill, t } from './page.js'
import { sessionEnded } from './session.js'
import { state } from './state.js'

export function ApiError(status, message, body) {
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

export function randomKey() {
  const bytes = new Uint8Array(16)
  window.crypto.getRandomValues(bytes)
  return Array.from(bytes, function (byte) {
    return byte.toString(16).padStart(2, '0')
  }).join('')
}

export async function api(method, path, body, headers) {
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

export function query(params) {
  const search = new URLSearchParams()
  Object.keys(params).forEach(function (name) {
    if (params[name] !== undefined && params[name] !== null && params[name] !== '') search.set(name, params[name])
  })
  return search.toString()
}

/** Shows a failure where the person is looking, and says it. */
export function report(error, target) {
  // A 401 has already taken the person back to the sign-in form, which says why.
  if (error instanceof ApiError && error.status === 401) return
  const text = error instanceof ApiError && error.status === 0 ? t.errNetwork : fill(t.errGeneric, { message: error.message })
  if (target) {
    target.textContent = text
    target.hidden = false
  }
  announce(text)
}
