import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LoginAsEntry } from '../../../../src/services/authn/modules/impersonation/index.ts'
import { ADMIN_EMAIL, addEperson, BrowserClient, loggedIn, startAuthn } from '../helpers.ts'

test("X-On-Behalf-Of follows DSpace's order: no token 401, feature off 400, not admin 403, bad uuid 400, unknown or admin 400", async (t) => {
  const off = await startAuthn(t)
  const offUser = await addEperson(off, 'user@example.org')
  const offAdmin = await loggedIn(off.app, ADMIN_EMAIL)
  assert.equal((await offAdmin.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': offUser.uuid } })).statusCode, 400)

  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true' })
  const user = await addEperson(test_, 'user@example.org')
  const otherAdmin = await addEperson(test_, 'second-admin@example.org', { admin: true })
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const plain = await loggedIn(test_.app, 'user@example.org')
  const adminUuid = (await admin.request('GET', 'authn/status')).json()._embedded.eperson.uuid

  const anonymous = await test_.app.inject({ method: 'GET', url: '/api/authn/status', headers: { 'x-on-behalf-of': user.uuid } })
  assert.equal(anonymous.statusCode, 401)
  assert.equal((await plain.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': otherAdmin.uuid } })).statusCode, 403)
  assert.equal((await plain.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': 'not-a-uuid' } })).statusCode, 403)
  assert.equal((await admin.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': 'not-a-uuid' } })).statusCode, 400)
  assert.equal((await admin.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': '00000000-0000-4000-8000-000000000000' } })).statusCode, 400)
  assert.equal((await admin.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': otherAdmin.uuid } })).statusCode, 400)
  assert.equal((await admin.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': adminUuid } })).statusCode, 400)

  const acting = await admin.request('GET', 'authn/status?projection=full', { headers: { 'x-on-behalf-of': user.uuid } })
  assert.equal(acting.statusCode, 200)
  assert.equal(acting.json().authenticated, true)
  assert.equal(acting.json()._embedded.eperson.email, 'user@example.org')
  // Requests run as the user: an administrator-only action is refused.
  assert.equal((await admin.request('GET', `eperson/epersons/${otherAdmin.uuid}`, { headers: { 'x-on-behalf-of': user.uuid } })).statusCode, 403)
  assert.equal((await admin.request('GET', `eperson/epersons/${user.uuid}`, { headers: { 'x-on-behalf-of': user.uuid } })).statusCode, 200)
})

test('while acting on behalf of someone, refresh and short-lived tokens are refused (403)', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true' })
  const user = await addEperson(test_, 'user@example.org')
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const headers = { 'x-on-behalf-of': user.uuid }
  const refresh = await admin.request('POST', 'authn/login', { headers })
  assert.equal(refresh.statusCode, 403)
  assert.equal(refresh.headers.authorization, undefined)
  assert.equal((await admin.request('POST', 'authn/shortlivedtokens', { headers })).statusCode, 403)
  // Without the header the administrator's own token still refreshes.
  assert.equal((await admin.request('POST', 'authn/login')).statusCode, 200)
})

test('GET /authz/authorizations/search/object?feature=loginOnBehalfOf answers as DSpace', async (t) => {
  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true' })
  const user = await addEperson(test_, 'user@example.org')
  const otherAdmin = await addEperson(test_, 'second-admin@example.org', { admin: true })
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const plain = await loggedIn(test_.app, 'user@example.org')
  const sites = (await admin.request('GET', 'core/sites')).json()
  const siteUri = sites._embedded.sites[0]._links.self.href
  const search = (client: BrowserClient, uri: string, extra = '') =>
    client.request('GET', `authz/authorizations/search/object?uri=${encodeURIComponent(uri)}&feature=loginOnBehalfOf${extra}`)

  const granted = await search(admin, siteUri)
  assert.equal(granted.statusCode, 200)
  const body = granted.json()
  assert.equal(body.page.totalElements, 1)
  const adminUuid = (await admin.request('GET', 'authn/status')).json()._embedded.eperson.uuid
  assert.equal(body._embedded.authorizations[0].id, `${adminUuid}_loginOnBehalfOf_core.site_${sites._embedded.sites[0].uuid}`)
  assert.equal(body._embedded.authorizations[0].type, 'authorization')

  assert.equal((await search(plain, siteUri)).json().page.totalElements, 0)
  assert.equal((await search(new BrowserClient(test_.app), siteUri)).json().page.totalElements, 0)
  assert.equal((await search(admin, 'http://localhost:80/server/api/core/communities/00000000-0000-4000-8000-000000000000')).json().page.totalElements, 0)
  assert.equal((await search(admin, `http://localhost:80/server/api/eperson/epersons/${user.uuid}`)).json().page.totalElements, 1)
  assert.equal((await search(admin, `http://localhost:80/server/api/eperson/epersons/${otherAdmin.uuid}`)).json().page.totalElements, 0)
  assert.equal((await search(admin, siteUri, `&eperson=${user.uuid}`)).json().page.totalElements, 0)
  assert.equal((await search(plain, siteUri, `&eperson=${otherAdmin.uuid}`)).statusCode, 403)
  assert.equal((await admin.request('GET', 'authz/authorizations/search/object')).statusCode, 400)

  const off = await startAuthn(t)
  const offAdmin = await loggedIn(off.app, ADMIN_EMAIL)
  const offSite = (await offAdmin.request('GET', 'core/sites')).json()._embedded.sites[0]._links.self.href
  assert.equal((await search(offAdmin, offSite)).json().page.totalElements, 0)
})

test('every request made on behalf of someone records the real administrator in the audit log; refused ones record nothing', async (t) => {
  const entries: LoginAsEntry[] = []
  const test_ = await startAuthn(t, { AUTHN_LOGIN_AS: 'true' }, { deps: { authn: { auditLog: { loginAs: (entry) => entries.push(entry) } } } })
  const user = await addEperson(test_, 'user@example.org')
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const plain = await loggedIn(test_.app, 'user@example.org')
  await plain.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': user.uuid } })
  await admin.request('GET', 'authn/status', { headers: { 'x-on-behalf-of': 'not-a-uuid' } })
  assert.deepEqual(entries, [])
  await admin.request('GET', `eperson/epersons/${user.uuid}?authentication-token=secret`, { headers: { 'x-on-behalf-of': user.uuid } })
  const adminUuid = (await admin.request('GET', 'authn/status')).json()._embedded.eperson.uuid
  assert.deepEqual(entries, [
    {
      administrator: adminUuid,
      administratorEmail: ADMIN_EMAIL,
      onBehalfOf: user.uuid,
      onBehalfOfEmail: 'user@example.org',
      method: 'GET',
      path: `/server/api/eperson/epersons/${user.uuid}`,
    },
  ])
})
