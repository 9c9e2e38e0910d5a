import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADMIN_EMAIL, addEperson, loggedIn, startAuthn, statusOf } from '../helpers.ts'

test('anonymous status: 200 HAL, authenticated false, WWW-Authenticate, eperson null, empty special groups page', async (t) => {
  const { app } = await startAuthn(t)
  const { response, body } = await statusOf(app)
  assert.equal(response.statusCode, 200)
  assert.equal(response.headers['content-type'], 'application/hal+json;charset=UTF-8')
  assert.equal(response.headers['www-authenticate'], 'password realm="DSpace REST API"')
  assert.deepEqual(body, {
    id: null,
    okay: true,
    authenticated: false,
    authenticationMethod: null,
    type: 'status',
    _links: {
      self: { href: 'http://localhost:80/api/authn/status' },
      eperson: { href: 'http://localhost:80/api/authn/status/eperson' },
      specialGroups: { href: 'http://localhost:80/api/authn/status/specialGroups' },
    },
    _embedded: {
      eperson: null,
      specialGroups: {
        _embedded: { specialGroups: [] },
        page: { number: 0, size: 20, totalPages: 0, totalElements: 0 },
        _links: { self: { href: 'http://localhost:80/api/authn/status/specialGroups' } },
      },
    },
  })
})

test('authenticated status embeds the eperson and links to its record; no WWW-Authenticate', async (t) => {
  const test_ = await startAuthn(t)
  const alice = await addEperson(test_, 'alice@example.org')
  const client = await loggedIn(test_.app, 'alice@example.org')
  const response = await client.request('GET', 'authn/status')
  const body = response.json()
  assert.equal(response.headers['www-authenticate'], undefined)
  assert.equal(body.authenticated, true)
  assert.equal(body.authenticationMethod, 'password')
  assert.equal(body._links.eperson.href, `http://localhost:80/server/api/eperson/epersons/${alice.uuid}`)
  assert.equal(body._links.specialGroups.href, 'http://localhost:80/server/api/authn/status/specialGroups')
  assert.equal(body._embedded.eperson.uuid, alice.uuid)
  assert.equal(body._embedded.eperson.email, 'alice@example.org')
  assert.equal(body._embedded.eperson.type, 'eperson')
})

test('?projection=full embeds both, ?embed= only what is named, an unknown projection is 400', async (t) => {
  const { app } = await startAuthn(t)
  const client = await loggedIn(app, ADMIN_EMAIL)
  const full = (await client.request('GET', 'authn/status?projection=full')).json()
  assert.deepEqual(Object.keys(full._embedded).sort(), ['eperson', 'specialGroups'])
  const groupsOnly = (await client.request('GET', 'authn/status?embed=specialGroups')).json()
  assert.deepEqual(Object.keys(groupsOnly._embedded), ['specialGroups'])
  const both = (await client.request('GET', 'authn/status?embed=specialGroups&embed=eperson')).json()
  assert.deepEqual(Object.keys(both._embedded).sort(), ['eperson', 'specialGroups'])
  const bad = await client.request('GET', 'authn/status?projection=nonsense')
  assert.equal(bad.statusCode, 400)
})

test('GET /authn links to login, logout and status; GET /authn/status/specialGroups is a page', async (t) => {
  const { app } = await startAuthn(t)
  const root = await app.inject({ method: 'GET', url: '/server/api/authn' })
  assert.equal(root.statusCode, 200)
  const links = root.json()._links
  assert.equal(root.json().type, 'authn')
  assert.match(links.login.href, /\/server\/api\/authn\/login$/)
  assert.match(links.logout.href, /\/server\/api\/authn\/logout$/)
  assert.match(links.status.href, /\/server\/api\/authn\/status$/)
  const page = await app.inject({ method: 'GET', url: '/server/api/authn/status/specialGroups?page=0&size=5' })
  assert.equal(page.statusCode, 200)
  assert.deepEqual(page.json().page, { number: 0, size: 5, totalPages: 0, totalElements: 0 })
  assert.equal((await app.inject({ method: 'GET', url: '/server/api/authn/status/specialGroups?size=0' })).statusCode, 400)
})

test('errors use DSpace body for unknown paths too, with no stack trace', async (t) => {
  const { app } = await startAuthn(t)
  const response = await app.inject({ method: 'GET', url: '/server/api/nothing/here' })
  assert.equal(response.statusCode, 404)
  assert.deepEqual(Object.keys(response.json()).sort(), ['error', 'message', 'path', 'status', 'timestamp'])
  assert.doesNotMatch(response.body, /at .*\.ts:\d+/)
})

test('repeated status calls with one token render each URL variant correctly (the rendering is reused per session)', async (t) => {
  const test_ = await startAuthn(t)
  await addEperson(test_, 'alice@example.org')
  const admin = await loggedIn(test_.app, ADMIN_EMAIL)
  const alice = await loggedIn(test_.app, 'alice@example.org')
  for (let i = 0; i < 3; i++) {
    assert.equal((await admin.request('GET', 'authn/status')).json()._embedded.eperson.email, ADMIN_EMAIL)
    assert.equal((await alice.request('GET', 'authn/status')).json()._embedded.eperson.email, 'alice@example.org')
    assert.deepEqual(Object.keys((await alice.request('GET', 'authn/status?embed=specialGroups')).json()._embedded), ['specialGroups'])
    const short = (await statusOf(test_.app, alice.token)).body as unknown as { _links: { self: { href: string } } }
    assert.equal(short._links.self.href, 'http://localhost:80/api/authn/status')
    assert.equal((await alice.request('GET', 'authn/status')).json()._links.self.href, 'http://localhost:80/server/api/authn/status')
  }
  // After a logout the same token is anonymous, not a cached rendering.
  await alice.request('POST', 'authn/logout')
  assert.equal((await statusOf(test_.app, alice.token)).body.authenticated, false)
})
