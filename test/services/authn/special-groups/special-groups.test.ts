import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, authnServices, BrowserClient, decodeJwt, PASSWORD, startAuthn } from '../helpers.ts'

const IP_GROUPS = 'Campus=10.0.0.0/8,192.168.0.0/16;Library=2001:db8::/32'

async function statusFrom(app: BrowserClient['app'], remoteAddress: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url: '/server/api/authn/status?projection=full', remoteAddress, headers })
  const body = response.json()
  return { body, groups: (body._embedded.specialGroups._embedded.specialGroups as Array<{ name: string }>).map((group) => group.name) }
}

test('IP special groups (IPv4 and IPv6 CIDR) apply per request, without a user too; groups are created at start', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_IP_GROUPS: IP_GROUPS })
  const { epersons } = await authnServices(test_)
  assert.ok(await epersons.findGroupByName('Campus'))
  assert.ok(await epersons.findGroupByName('Library'))

  const campus = await statusFrom(test_.app, '10.1.2.3')
  assert.equal(campus.body.authenticated, false)
  assert.deepEqual(campus.groups, ['Campus'])
  assert.equal(campus.body._embedded.specialGroups.page.totalElements, 1)
  assert.deepEqual((await statusFrom(test_.app, '::ffff:192.168.4.4')).groups, ['Campus'])
  assert.deepEqual((await statusFrom(test_.app, '2001:db8::1')).groups, ['Library'])
  assert.deepEqual((await statusFrom(test_.app, '8.8.8.8')).groups, [])
  const page = await test_.app.inject({ method: 'GET', url: '/server/api/authn/status/specialGroups', remoteAddress: '10.9.9.9' })
  assert.equal(page.json()._embedded.specialGroups[0].name, 'Campus')
})

test('X-Forwarded-For counts only from AUTHN_TRUSTED_PROXIES, and then its rightmost untrusted address', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_IP_GROUPS: IP_GROUPS, AUTHN_TRUSTED_PROXIES: '127.0.0.1,172.16.0.0/12' })
  // From an untrusted address the header is ignored.
  assert.deepEqual((await statusFrom(test_.app, '8.8.8.8', { 'x-forwarded-for': '10.0.0.1' })).groups, [])
  assert.deepEqual((await statusFrom(test_.app, '127.0.0.1', { 'x-forwarded-for': '10.0.0.1' })).groups, ['Campus'])
  assert.deepEqual((await statusFrom(test_.app, '127.0.0.1', { 'x-forwarded-for': '10.0.0.1, 172.16.0.5' })).groups, ['Campus'])
  // A forged left-hand entry does not help a client outside the range.
  assert.deepEqual((await statusFrom(test_.app, '127.0.0.1', { 'x-forwarded-for': '10.0.0.1, 8.8.8.8' })).groups, [])
  assert.deepEqual((await statusFrom(test_.app, '127.0.0.1', { 'x-forwarded-for': 'garbage' })).groups, [])
})

test('method groups go into sg; IP groups are added per request and never frozen into the token', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_IP_GROUPS: IP_GROUPS, AUTHN_PASSWORD_GROUPS: 'Password Users' })
  const { epersons } = await authnServices(test_)
  const passwordGroup = await epersons.findGroupByName('Password Users')
  const client = new BrowserClient(test_.app)
  await client.request('GET', 'security/csrf')
  const login = await test_.app.inject({
    method: 'POST',
    url: '/server/api/authn/login',
    remoteAddress: '10.1.1.1',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'DSPACE-XSRF-COOKIE=x', 'x-xsrf-token': 'x' },
    payload: new URLSearchParams({ user: ADMIN_EMAIL, password: PASSWORD }).toString(),
  })
  assert.equal(login.statusCode, 200)
  const token = String(login.headers.authorization).slice('Bearer '.length)
  assert.deepEqual(decodeJwt(token).payload.sg, [passwordGroup?.uuid])
  const authorization = { authorization: `Bearer ${token}` }
  assert.deepEqual((await statusFrom(test_.app, '10.1.1.1', authorization)).groups, ['Campus', 'Password Users'])
  assert.deepEqual((await statusFrom(test_.app, '8.8.8.8', authorization)).groups, ['Password Users'])
})
