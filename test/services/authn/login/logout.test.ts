import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, BrowserClient, loggedIn, startAuthn, statusOf } from '../helpers.ts'

test('logout with one token ends every token of the user, on every device, including refreshed ones', async (t) => {
  const { app, clock } = await startAuthn(t)
  const laptop = await loggedIn(app, ADMIN_EMAIL)
  const phone = await loggedIn(app, ADMIN_EMAIL)
  clock.advance(60_000)
  assert.equal((await phone.request('POST', 'authn/login')).statusCode, 200)
  const short = (await phone.request('POST', 'authn/shortlivedtokens')).json().token
  const response = await laptop.request('POST', 'authn/logout')
  assert.equal(response.statusCode, 204)
  assert.equal(response.body, '')
  for (const token of [laptop.token, phone.token]) assert.equal((await statusOf(app, token)).body.authenticated, false)
  const download = await app.inject({ method: 'GET', url: `/api/authn/status?authentication-token=${short}` })
  assert.equal(download.json().authenticated, false)
  assert.equal((await phone.request('POST', 'authn/login')).statusCode, 401)
  // Logging in again works.
  assert.equal((await laptop.login(ADMIN_EMAIL)).statusCode, 200)
  assert.equal((await statusOf(app, laptop.token)).body.authenticated, true)
})

test('logout answers 204 without a token, with a bad one, with an expired one', async (t) => {
  const { app } = await startAuthn(t)
  const client = new BrowserClient(app)
  await client.request('GET', 'security/csrf')
  assert.equal((await client.request('POST', 'authn/logout')).statusCode, 204)
  client.token = 'not-a-token'
  assert.equal((await client.request('POST', 'authn/logout')).statusCode, 204)
  assert.equal((await client.request('POST', 'authn/logout?return=https://elsewhere.example&action=x')).statusCode, 204)
})

test('GET/PUT/PATCH/DELETE /authn/logout → 405 and the token stays valid; HEAD → 204 without logging out', async (t) => {
  const { app } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const get = await client.request('GET', 'authn/logout')
  assert.equal(get.statusCode, 405)
  assert.equal(get.json().message, 'Only POST is allowed for logout requests.')
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) assert.equal((await client.request(method, 'authn/logout')).statusCode, 405)
  assert.equal((await client.request('HEAD', 'authn/logout')).statusCode, 204)
  assert.equal((await statusOf(app, client.token)).body.authenticated, true)
})

test('with AUTHN_LOGOUT_URL logout answers 302 there; `return` only to the server or an allowed origin', async (t) => {
  const { app } = await startAuthn(t, { AUTHN_LOGOUT_URL: 'https://idp.example.org/logout', AUTHN_ALLOWED_ORIGINS: 'https://ui.example.org' })
  const client = await loggedIn(app, ADMIN_EMAIL)
  const plain = await client.request('POST', 'authn/logout')
  assert.equal(plain.statusCode, 302)
  assert.equal(plain.headers.location, 'https://idp.example.org/logout')
  assert.equal((await statusOf(app, client.token)).body.authenticated, false)

  const withReturn = await client.request('POST', `authn/logout?return=${encodeURIComponent('https://ui.example.org/home')}&action=logout`)
  assert.equal(withReturn.statusCode, 302)
  const location = new URL(String(withReturn.headers.location))
  assert.equal(location.searchParams.get('return'), 'https://ui.example.org/home')
  assert.equal(location.searchParams.get('action'), 'logout')
  assert.equal((await client.request('POST', `authn/logout?return=${encodeURIComponent('http://localhost:80/done')}`)).statusCode, 302)
  for (const bad of ['https://evil.example/', 'javascript:alert(1)', '//evil.example/x']) {
    const response = await client.request('POST', `authn/logout?return=${encodeURIComponent(bad)}`)
    assert.equal(response.statusCode, 400, bad)
  }
})
