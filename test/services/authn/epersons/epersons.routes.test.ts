import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, addEperson, authnServices, BrowserClient, loggedIn, PASSWORD, startAuthn, statusOf } from '../helpers.ts'

test('GET /eperson/epersons/{uuid}: self or administrator; others 403 whether or not the uuid exists; anonymous 401', async (t) => {
  const test_ = await startAuthn(t)
  const { app } = test_
  const alice = await addEperson(test_, 'alice@example.org')
  const bob = await addEperson(test_, 'bob@example.org')
  const aliceClient = await loggedIn(app, 'alice@example.org')
  const admin = await loggedIn(app, ADMIN_EMAIL)

  const self = await aliceClient.request('GET', `eperson/epersons/${alice.uuid}`)
  assert.equal(self.statusCode, 200)
  assert.equal(self.headers['content-type'], 'application/hal+json;charset=UTF-8')
  const body = self.json()
  assert.equal(body.uuid, alice.uuid)
  assert.equal(body.email, 'alice@example.org')
  assert.equal(body.type, 'eperson')
  assert.equal(body.canLogIn, true)
  assert.match(body._links.self.href, new RegExp(`/server/api/eperson/epersons/${alice.uuid}$`))

  assert.equal((await aliceClient.request('GET', `eperson/epersons/${bob.uuid}`)).statusCode, 403)
  assert.equal((await aliceClient.request('GET', 'eperson/epersons/00000000-0000-4000-8000-000000000000')).statusCode, 403)
  assert.equal((await admin.request('GET', `eperson/epersons/${bob.uuid}`)).statusCode, 200)
  assert.equal((await admin.request('GET', 'eperson/epersons/00000000-0000-4000-8000-000000000000')).statusCode, 404)
  const bad = await admin.request('GET', 'eperson/epersons/not-a-uuid')
  assert.equal(bad.statusCode, 400)
  assert.deepEqual(Object.keys(bad.json()).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
  const anonymous = await new BrowserClient(app).request('GET', `eperson/epersons/${alice.uuid}`)
  assert.equal(anonymous.statusCode, 401)
  assert.equal(anonymous.json().message, 'Authentication is required')
  assert.equal(anonymous.headers['www-authenticate'], 'password realm="DSpace REST API"')
})

test('administrators create, patch and delete epersons; others may not', async (t) => {
  const test_ = await startAuthn(t)
  const { app } = test_
  await addEperson(test_, 'alice@example.org')
  const admin = await loggedIn(app, ADMIN_EMAIL)
  const alice = await loggedIn(app, 'alice@example.org')

  const payload = { email: 'New.User@Example.org', password: 'a fine password', canLogIn: true, metadata: { 'eperson.firstname': [{ value: 'New' }] } }
  assert.equal((await alice.request('POST', 'eperson/epersons', { json: payload })).statusCode, 403)
  const created = await admin.request('POST', 'eperson/epersons', { json: payload })
  assert.equal(created.statusCode, 201)
  const user = created.json()
  assert.equal(user.email, 'new.user@example.org')
  assert.equal(user.metadata['eperson.firstname'][0].value, 'New')
  assert.equal(created.headers.location, user._links.self.href)
  assert.equal((await admin.request('POST', 'eperson/epersons', { json: payload })).statusCode, 422)
  assert.equal((await admin.request('POST', 'eperson/epersons', { json: { email: 'not-an-email' } })).statusCode, 422)
  assert.equal((await admin.request('POST', 'eperson/epersons', { json: { nope: true } })).statusCode, 400)

  const newcomer = await loggedIn(app, 'new.user@example.org', 'a fine password')
  // A password change by an administrator ends every session of the account.
  const patched = await admin.request('PATCH', `eperson/epersons/${user.uuid}`, { json: [{ op: 'replace', path: '/password', value: 'changed password' }] })
  assert.equal(patched.statusCode, 200)
  assert.equal((await statusOf(app, newcomer.token)).body.authenticated, false)
  assert.equal((await new BrowserClient(app).login('new.user@example.org', 'changed password')).statusCode, 200)

  const again = await loggedIn(app, 'new.user@example.org', 'changed password')
  const disabled = await admin.request('PATCH', `eperson/epersons/${user.uuid}`, { json: [{ op: 'replace', path: '/canLogIn', value: false }] })
  assert.equal(disabled.statusCode, 200)
  assert.equal(disabled.json().canLogIn, false)
  assert.equal((await statusOf(app, again.token)).body.authenticated, false)
  assert.equal((await new BrowserClient(app).login('new.user@example.org', 'changed password')).statusCode, 401)

  assert.equal((await admin.request('PATCH', `eperson/epersons/${user.uuid}`, { json: [{ op: 'replace', path: '/email', value: 'x' }] })).statusCode, 400)
  assert.equal((await alice.request('DELETE', `eperson/epersons/${user.uuid}`)).statusCode, 403)
  assert.equal((await admin.request('DELETE', `eperson/epersons/${user.uuid}`)).statusCode, 204)
  assert.equal((await admin.request('DELETE', `eperson/epersons/${user.uuid}`)).statusCode, 404)
  const adminStatus = await admin.request('GET', 'authn/status')
  assert.equal((await admin.request('DELETE', `eperson/epersons/${adminStatus.json()._embedded.eperson.uuid}`)).statusCode, 422)
})

test('a user changes their own password only with the current one (DSpace 7.6 patch form)', async (t) => {
  const test_ = await startAuthn(t)
  const alice = await addEperson(test_, 'alice@example.org')
  const client = await loggedIn(test_.app, 'alice@example.org')
  const wrong = await client.request('PATCH', `eperson/epersons/${alice.uuid}`, {
    json: [{ op: 'add', path: '/password', value: { new_password: 'brand new password', current_password: 'wrong one' } }],
  })
  assert.equal(wrong.statusCode, 403)
  assert.equal(
    (await client.request('PATCH', `eperson/epersons/${alice.uuid}`, { json: [{ op: 'replace', path: '/canLogIn', value: false }] })).statusCode,
    403,
  )
  const right = await client.request('PATCH', `eperson/epersons/${alice.uuid}`, {
    json: [{ op: 'add', path: '/password', value: { new_password: 'brand new password', current_password: PASSWORD } }],
  })
  assert.equal(right.statusCode, 200)
  assert.equal((await new BrowserClient(test_.app).login('alice@example.org', 'brand new password')).statusCode, 200)
})

test('GET /eperson/groups/{uuid}: members and administrators', async (t) => {
  const test_ = await startAuthn(t)
  await addEperson(test_, 'alice@example.org')
  await addEperson(test_, 'bob@example.org')
  const { epersons } = await authnServices(test_)
  const group = await epersons.ensureGroup('Reviewers')
  await epersons.addMember('Reviewers', 'alice@example.org')
  const alice = await loggedIn(test_.app, 'alice@example.org')
  const bob = await loggedIn(test_.app, 'bob@example.org')
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const seen = await alice.request('GET', `eperson/groups/${group.uuid}`)
  assert.equal(seen.statusCode, 200)
  assert.equal(seen.json().name, 'Reviewers')
  assert.equal(seen.json().type, 'group')
  assert.equal((await bob.request('GET', `eperson/groups/${group.uuid}`)).statusCode, 403)
  assert.equal((await admin.request('GET', `eperson/groups/${group.uuid}`)).statusCode, 200)
  assert.equal((await admin.request('GET', 'eperson/groups/00000000-0000-4000-8000-000000000000')).statusCode, 404)
})

test('a JSON Patch of /password whose new_password or current_password is not a string is a 400, not a 500', async (t) => {
  const test_ = await startAuthn(t)
  const alice = await addEperson(test_, 'alice@example.org')
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const self = await loggedIn(test_.app, 'alice@example.org')
  for (const value of [{ new_password: 123 }, { new_password: null }, { new_password: ['x'] }, {}]) {
    const response = await admin.request('PATCH', `eperson/epersons/${alice.uuid}`, { json: [{ op: 'replace', path: '/password', value }] })
    assert.equal(response.statusCode, 400, `${JSON.stringify(value)}: ${response.body}`)
  }
  const selfChange = await self.request('PATCH', `eperson/epersons/${alice.uuid}`, {
    json: [{ op: 'add', path: '/password', value: { new_password: 'a brand new password', current_password: 42 } }],
  })
  assert.equal(selfChange.statusCode, 400, selfChange.body)
})
