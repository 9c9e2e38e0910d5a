import assert from 'node:assert/strict'

/**
 * Clients of a Triad reached over a real socket (`fetch`), for tests that run `triad serve`
 * processes: an authn login as a browser does it (CSRF cookie and header), and the avatar's
 * and payments' calls the multi-instance and backup tests need.
 */

/** A logged-in authn session: the bearer token, and the cookie and CSRF token that go with it. */
export interface AuthnLogin {
  token: string
  cookie: string
  xsrf: string
}

/** The cookie header a browser would send after `responses`, in order (a later cookie of the same name wins). */
function cookiesOf(...responses: Response[]): string {
  const jar = new Map<string, string>()
  for (const response of responses) {
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(';')[0] ?? ''
      const equals = pair.indexOf('=')
      const value = pair.slice(equals + 1)
      if (value === '') jar.delete(pair.slice(0, equals))
      else jar.set(pair.slice(0, equals), value)
    }
  }
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
}

/** Logs `email` in at `base` (`/server/api`), as dspace-angular does: CSRF first, then the form. */
export async function loginOverHttp(base: string, email: string, password: string): Promise<AuthnLogin> {
  const csrf = await fetch(`${base}/server/api/security/csrf`)
  const xsrf = csrf.headers.get('dspace-xsrf-token') ?? ''
  const cookie = cookiesOf(csrf)
  assert.ok(xsrf && cookie, `no CSRF token from ${base}`)
  const login = await fetch(`${base}/server/api/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-xsrf-token': xsrf, cookie },
    body: new URLSearchParams({ user: email, password }).toString(),
  })
  assert.equal(login.status, 200, `login at ${base}: ${await login.text()}`)
  const token = (login.headers.get('authorization') ?? '').replace('Bearer ', '')
  assert.ok(token, 'the login answers a token')
  return { token, cookie: cookiesOf(csrf, login), xsrf: login.headers.get('dspace-xsrf-token') ?? xsrf }
}

/** Whether `token` is authenticated at `base` (`GET /server/api/authn/status`). */
export async function authenticatedAt(base: string, token: string): Promise<boolean> {
  const response = await fetch(`${base}/server/api/authn/status`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(response.status, 200)
  return ((await response.json()) as { authenticated: boolean }).authenticated
}

/** Logs the session out at `base`; answers the status code. */
export async function logoutOverHttp(base: string, login: AuthnLogin): Promise<number> {
  const response = await fetch(`${base}/server/api/authn/logout`, {
    method: 'POST',
    headers: { authorization: `Bearer ${login.token}`, 'x-xsrf-token': login.xsrf, cookie: login.cookie },
  })
  await response.arrayBuffer()
  return response.status
}

/** One avatar chat turn (`POST /v1/chat`); answers the status and the body. */
export async function chatOverHttp(base: string, sessionId: string, userText: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, userText }),
  })
  return { status: response.status, body: await response.text() }
}

/** The user messages of an avatar session, in order (`GET /v1/session/:id/history`); undefined when it does not exist. */
export async function userMessagesAt(base: string, sessionId: string): Promise<string[] | undefined> {
  const response = await fetch(`${base}/v1/session/${encodeURIComponent(sessionId)}/history`)
  if (response.status === 404) {
    await response.arrayBuffer()
    return undefined
  }
  assert.equal(response.status, 200)
  const { messages } = (await response.json()) as { messages: Array<{ role: string; content: string }> }
  return messages.filter((message) => message.role === 'user').map((message) => message.content)
}

const basicAuth = (key: string) => `Basic ${Buffer.from(`:${key}`).toString('base64')}`

/** A payments app, a test EUR merchant of it, and an approved authorization of `amount` made through the client API. */
export async function authorizeOverHttp(base: string, amount: number): Promise<{ appKey: string; merchantId: string; merchantKey: string; transactionId: string }> {
  const json = { 'content-type': 'application/json' }
  const app = await fetch(`${base}/apps`, { method: 'POST', headers: json, body: '{}' })
  assert.equal(app.status, 201)
  const appKey = ((await app.json()) as { app: { key: string } }).app.key
  const created = await fetch(`${base}/merchants`, {
    method: 'POST',
    headers: { ...json, authorization: basicAuth(appKey) },
    body: JSON.stringify({ currency: 'EUR', email: 'ops@example.com', website: 'https://example.com', descriptor: 'OPS', company: { country: 'DK' }, test: true }),
  })
  assert.equal(created.status, 201)
  const merchant = ((await created.json()) as { merchant: { id: string; key: string } }).merchant
  const vault = async (type: string, value: string) => {
    const response = await fetch(`${base}/vault`, { method: 'POST', headers: { ...json, 'accept-version': '1' }, body: JSON.stringify({ type, value }) })
    assert.equal(response.status, 200)
    return response.json()
  }
  const payment = await fetch(`${base}/payments`, {
    method: 'POST',
    headers: { ...json, 'accept-version': '1' },
    body: JSON.stringify({
      integration: { key: merchant.key },
      amount: { currency: 'EUR', exponent: 2, value: amount },
      card: { number: await vault('pcn', '4111111111111111'), code: await vault('pcsc', '987'), expiry: { month: 1, year: 2031 } },
      test: { tds: { challenge: false, fingerprint: 'unavailable' } },
      hints: [],
    }),
  })
  const text = await payment.text()
  assert.equal(payment.status, 200, text)
  const transactionId = (JSON.parse(text) as { authorizationId?: string }).authorizationId
  assert.ok(transactionId, `an authorization: ${text}`)
  return { appKey, merchantId: merchant.id, merchantKey: merchant.key, transactionId }
}

/** `POST /transactions/:id/captures` of `amount` with the app's key; answers the status. */
export async function captureOverHttp(base: string, appKey: string, transactionId: string, amount: number): Promise<number> {
  const response = await fetch(`${base}/transactions/${transactionId}/captures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicAuth(appKey) },
    body: JSON.stringify({ amount }),
  })
  await response.arrayBuffer()
  return response.status
}

/** The transaction as the merchant API shows it (`GET /transactions/:id`). */
export async function transactionOverHttp(base: string, appKey: string, transactionId: string): Promise<{ capturedAmount: number; trail: unknown[] }> {
  const response = await fetch(`${base}/transactions/${transactionId}`, { headers: { authorization: basicAuth(appKey) } })
  assert.equal(response.status, 200)
  return ((await response.json()) as { transaction: { capturedAmount: number; trail: unknown[] } }).transaction
}
