import assert from 'node:assert/strict'
import { test } from 'node:test'
import { authnDatabase } from '../../../../src/services/authn/tables.ts'
import type { TestApp } from '../../../helpers/build-app.ts'
import { addEperson, BrowserClient, startAuthn, statusOf } from '../helpers.ts'

const UI = 'https://ui.example.org'
const PROXY = '10.0.0.5'

async function startShibboleth(t: Parameters<typeof startAuthn>[0], env: Record<string, string> = {}) {
  return startAuthn(t, { AUTHN_ALLOWED_ORIGINS: UI, AUTHN_TRUSTED_PROXIES: '10.0.0.0/24', AUTHN_SHIBBOLETH: 'true', ...env })
}

/** The browser's return from the Shibboleth SP (headers set by it), from `from`; then the login, as dspace-angular does it. */
async function headerLogin(app: TestApp, headers: Record<string, string>, from = PROXY) {
  const browser = new BrowserClient(app.app)
  const back = await app.app.inject({ method: 'GET', url: `/server/api/authn/shibboleth?redirectUrl=${encodeURIComponent(`${UI}/home`)}`, headers, remoteAddress: from })
  const cookie = [back.headers['set-cookie']].flat().find((value) => value?.startsWith('Authorization-cookie='))
  if (cookie) browser.cookies.set('Authorization-cookie', cookie.split(';')[0]?.split('=')[1] ?? '')
  await browser.request('GET', 'security/csrf')
  const login = await browser.request('POST', 'authn/login', { auth: false })
  const { body } = await statusOf(app.app, browser.token)
  const embedded = body._embedded as { eperson?: { email: string }; specialGroups?: { _embedded: { specialGroups: Array<{ name: string }> } } } | undefined
  return {
    back,
    login: login.statusCode,
    email: embedded?.eperson?.email,
    groups: (embedded?.specialGroups?._embedded.specialGroups ?? []).map((group) => group.name).sort(),
  }
}

test('the Shibboleth SP in front passes the person as headers: a trusted proxy logs them in, with role groups', async (t) => {
  const app = await startShibboleth(t, { AUTHN_SHIBBOLETH_ROLE_GROUPS: 'staff=Staff', AUTHN_SHIBBOLETH_GROUPS: 'Federated' })
  await addEperson(app, 'olga@example.edu')
  const result = await headerLogin(app, { mail: 'olga@example.edu', affiliation: 'member@example.edu;staff@example.edu' })
  assert.equal(result.back.statusCode, 302, result.back.body)
  assert.equal(result.back.headers.location, `${UI}/home`)
  assert.equal(result.login, 200)
  assert.equal(result.email, 'olga@example.edu')
  assert.deepEqual(result.groups, ['Federated', 'Staff'])
})

test('the same headers from an untrusted address change nothing: 401, no hand-off, no eperson created', async (t) => {
  const app = await startShibboleth(t, { AUTHN_SHIBBOLETH_AUTO_REGISTER: 'true' })
  await addEperson(app, 'olga@example.edu')
  const attempts: Array<Record<string, string>> = [
    { mail: 'olga@example.edu' },
    // X-Forwarded-For naming the proxy does not make the connection the proxy's.
    { mail: 'olga@example.edu', 'x-forwarded-for': PROXY },
    { mail: 'newcomer@example.edu', 'persistent-id': 'idp!sp!abc' },
  ]
  for (const headers of attempts) {
    const result = await headerLogin(app, headers, '203.0.113.7')
    assert.equal(result.back.statusCode, 401)
    assert.match(String(result.back.headers['www-authenticate']), /shibboleth realm=/)
    assert.doesNotMatch(String(result.back.headers['set-cookie'] ?? ''), /Authorization-cookie/)
    assert.equal(result.login, 401)
  }
  const created = await authnDatabase(app.database).db.selectFrom('authn_epersons').select('email').where('email', '=', 'newcomer@example.edu').execute()
  assert.equal(created.length, 0)
})

test('persistent-id links the account; auto-registration and header names follow the configuration', async (t) => {
  const app = await startShibboleth(t, { AUTHN_SHIBBOLETH_AUTO_REGISTER: 'true', AUTHN_SHIBBOLETH_HEADERS: 'email=X-Mail,persistentId=X-Pid' })
  const first = await headerLogin(app, { 'x-mail': 'new@example.edu', 'x-pid': 'idp!sp!opaque' })
  assert.equal(first.email, 'new@example.edu')
  const renamed = await headerLogin(app, { 'x-mail': 'renamed@example.edu', 'x-pid': 'idp!sp!opaque' })
  assert.equal(renamed.email, 'new@example.edu', 'the persistent id wins over a changed e-mail')
  const defaultsIgnored = await headerLogin(app, { mail: 'other@example.edu' })
  assert.equal(defaultsIgnored.back.statusCode, 401, 'the default header name is not read once renamed')
})

test('WWW-Authenticate lists the shibboleth scheme at the SP login handler, targeting /authn/shibboleth', async (t) => {
  const app = await startShibboleth(t)
  const response = await app.app.inject({ method: 'GET', url: '/server/api/authn/status' })
  assert.match(
    String(response.headers['www-authenticate']),
    /shibboleth realm="DSpace REST API", location="http:\/\/localhost(:80)?\/Shibboleth\.sso\/Login\?target=http%3A%2F%2Flocalhost(%3A80)?%2Fserver%2Fapi%2Fauthn%2Fshibboleth"/,
  )
})

test('the headers mode needs AUTHN_TRUSTED_PROXIES', async (t) => {
  await assert.rejects(startAuthn(t, { AUTHN_SHIBBOLETH: 'true' }), /AUTHN_SHIBBOLETH needs AUTHN_TRUSTED_PROXIES/)
  await assert.rejects(startAuthn(t, { AUTHN_SHIBBOLETH: 'true', AUTHN_TRUSTED_PROXIES: '10.0.0.1', AUTHN_SHIBBOLETH_HEADERS: 'colour=X' }), /AUTHN_SHIBBOLETH_HEADERS/)
})
