import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signJwt } from '../../../../src/core/security/jwt.ts'
import { deriveKey } from '../../../../src/core/security/secret-token.ts'
import { ADMIN_EMAIL, addEperson, decodeJwt, loggedIn, startAuthn, statusOf } from '../helpers.ts'

const SECRET = 's'.repeat(48)
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

test('tampered tokens are anonymous, never an error: signature, alg none/HS512, edited exp, eid or sg', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_SECRET: SECRET })
  const bob = await addEperson(test_, 'bob@example.org')
  const client = await loggedIn(test_.app, ADMIN_EMAIL)
  const token = client.token ?? ''
  const [header, payload, signature] = token.split('.')
  const claims = decodeJwt(token).payload
  const forged = {
    'flipped signature': `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
    'alg none': `${b64({ alg: 'none' })}.${payload}.`,
    'alg none, no signature part': `${b64({ alg: 'none' })}.${payload}`,
    'edited exp': `${header}.${b64({ ...claims, exp: Number(claims.exp) + 3600 })}.${signature}`,
    'edited eid': `${header}.${b64({ ...claims, eid: bob.uuid })}.${signature}`,
    'injected sg': `${header}.${b64({ ...claims, sg: ['00000000-0000-4000-8000-000000000000'] })}.${signature}`,
    'non-uuid eid': `${header}.${b64({ ...claims, eid: 'x' })}.${signature}`,
    garbage: 'abc',
    empty: '',
  }
  for (const [name, value] of Object.entries(forged)) {
    const { response, body } = await statusOf(test_.app, value)
    assert.equal(response.statusCode, 200, name)
    assert.equal(body.authenticated, false, name)
  }
  // Signed with the right key but HS512: the algorithm is pinned.
  const hs512 = await new (await import('jose')).SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(deriveKey(SECRET, 'authn/login-token'))
  assert.equal((await statusOf(test_.app, hs512)).body.authenticated, false)
  // Signed with the right key, but for a session that does not exist (or another user's eid).
  const key = deriveKey(SECRET, 'authn/login-token')
  assert.equal((await statusOf(test_.app, await signJwt({ ...claims, sid: '00000000-0000-4000-8000-000000000000' }, key))).body.authenticated, false)
  assert.equal((await statusOf(test_.app, await signJwt({ ...claims, eid: bob.uuid }, key))).body.authenticated, false)
  // The genuine token still works.
  assert.equal((await statusOf(test_.app, token)).body.authenticated, true)
})

test('a short-lived token is never a login token, even re-signed with the login key header', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_SECRET: SECRET })
  const client = await loggedIn(test_.app, ADMIN_EMAIL)
  const short = (await client.request('POST', 'authn/shortlivedtokens')).json().token
  assert.equal((await statusOf(test_.app, short)).body.authenticated, false)
  assert.equal(decodeJwt(short).header.typ, 'dspace-shortlived+jwt')
  // A login token's payload signed with the short-lived key (or the reverse) passes neither check.
  const claims = decodeJwt(client.token ?? '').payload
  const crossed = await signJwt(claims, deriveKey(SECRET, 'authn/short-lived-token'))
  assert.equal((await statusOf(test_.app, crossed)).body.authenticated, false)
})
