import assert from 'node:assert/strict'
import { test } from 'node:test'
import { engineIndependent } from '../../helpers/build-app.ts'
import { startAuthn } from './helpers.ts'

// Routes behind a setting (passkeys, OpenID Connect, Shibboleth) answer 404 naming the setting
// while it is off, before the CSRF filter and the token are judged: a switched-off feature says
// so whatever the request. CORS still comes first (it adds the headers a permitted page needs).

const PASSKEYS_OFF = 'Passkey routes are switched off on this server: set AUTHN_PASSKEY_RP_ID to turn them on'
const OIDC_OFF = 'OpenID Connect sign-on routes are switched off on this server: set AUTHN_OIDC_ISSUER or AUTHN_OIDC_PRESET to turn them on'
const SHIBBOLETH_OFF = 'Shibboleth sign-on routes are switched off on this server: set AUTHN_SHIBBOLETH=true to turn them on'

test('a switched-off route answers its 404 to a POST or DELETE without the CSRF pair and to an unknown token, not 403 or 401', { skip: engineIndependent }, async (t) => {
  const { app } = await startAuthn(t)
  const calls = [
    ['POST', '/api/authn/passkeys/login/options', {}, PASSKEYS_OFF],
    ['POST', '/server/api/authn/passkeys/login', {}, PASSKEYS_OFF],
    ['POST', '/api/authn/passkeys/registration/options', {}, PASSKEYS_OFF],
    ['POST', '/api/authn/passkeys', {}, PASSKEYS_OFF],
    ['DELETE', '/api/authn/passkeys/some-id', {}, PASSKEYS_OFF],
    ['POST', '/api/authn/passkeys/login', { authorization: 'Bearer triad_pat_unknown' }, PASSKEYS_OFF],
    ['GET', '/api/authn/oidc', { authorization: 'Bearer triad_pat_unknown' }, OIDC_OFF],
    ['GET', '/server/api/authn/shibboleth', { authorization: 'Bearer triad_pat_unknown' }, SHIBBOLETH_OFF],
  ] as const
  for (const [method, url, headers, message] of calls) {
    const response = await app.inject({ method, url, headers })
    assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`)
    assert.equal(response.json().message, message)
  }

  // The filters still hold everywhere else: a POST without the pair to a route that needs no setting is refused.
  const login = await app.inject({ method: 'POST', url: '/api/authn/login', payload: 'user=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  assert.equal(login.statusCode, 403, login.body)
  // And a foreign origin is refused by CORS before anything, switched-off routes included.
  const foreign = await app.inject({ method: 'POST', url: '/api/authn/passkeys/login/options', headers: { origin: 'https://evil.example' } })
  assert.equal(foreign.statusCode, 403, foreign.body)
})

test('switched on, the same POST without the CSRF pair is refused by the CSRF filter (403)', { skip: engineIndependent }, async (t) => {
  const { app } = await startAuthn(t, { AUTHN_PASSKEY_RP_ID: 'localhost' })
  const response = await app.inject({ method: 'POST', url: '/api/authn/passkeys/login/options' })
  assert.equal(response.statusCode, 403, response.body)
})
