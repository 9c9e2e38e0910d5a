import assert from 'node:assert/strict'
import { test } from 'node:test'
import { authnDatabase } from '../../../../src/services/authn/tables.ts'
import type { TestApp } from '../../../helpers/build-app.ts'
import { addEperson, statusOf } from '../helpers.ts'
import { beginLogin, finishLogin, newBrowser, postResponse, startSaml } from './saml-harness.ts'
import { ATTR, type AssertionOptions, type TestIdp } from './test-idp.ts'

/** Logs in through the IdP with `options`; the login response and what GET /authn/status then says. */
async function samlLogin(app: TestApp, idp: TestIdp, options: AssertionOptions) {
  const browser = newBrowser(app)
  const location = await beginLogin(browser)
  const consumed = await postResponse(browser, await idp.respond(location, { issueInstant: app.clock.now(), ...options }))
  const login = consumed.statusCode === 302 ? await finishLogin(browser) : consumed
  const { body } = await statusOf(app.app, browser.token)
  const embedded = body._embedded as { eperson?: { email: string; uuid: string }; specialGroups?: { _embedded: { specialGroups: Array<{ name: string }> } } } | undefined
  return {
    status: login.statusCode,
    eperson: embedded?.eperson,
    groups: (embedded?.specialGroups?._embedded.specialGroups ?? []).map((group) => group.name).sort(),
  }
}

test('auto-registration creates the eperson from the federation’s attributes (URN names) when allowed', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: true })
  const result = await samlLogin(app, idp, {
    attributes: { [ATTR.email]: 'New.Person@Example.edu', [ATTR.givenName]: 'Ada', [ATTR.surname]: 'Lovelace', [ATTR.principalName]: 'ada@example.edu' },
  })
  assert.equal(result.status, 200)
  assert.equal(result.eperson?.email, 'new.person@example.edu')
  const row = await authnDatabase(app.database).db.selectFrom('authn_epersons').select(['first_name', 'last_name']).where('email', '=', 'new.person@example.edu').executeTakeFirst()
  assert.deepEqual(row, { first_name: 'Ada', last_name: 'Lovelace' })
})

test('without auto-registration an unknown person is refused, and nobody is created', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  const result = await samlLogin(app, idp, { attributes: { [ATTR.email]: 'stranger@example.edu' } })
  assert.equal(result.status, 401)
  const rows = await authnDatabase(app.database).db.selectFrom('authn_epersons').select('email').where('email', '=', 'stranger@example.edu').execute()
  assert.equal(rows.length, 0)
})

test('an existing eperson is matched by e-mail, case-insensitively', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  const existing = await addEperson(app, 'olga@example.edu')
  const result = await samlLogin(app, idp, { attributes: { [ATTR.email]: 'OLGA@example.edu' } })
  assert.equal(result.status, 200)
  assert.equal(result.eperson?.uuid, existing.uuid)
})

test('the persistent id (eduPersonTargetedID) is stored at the first login and matches later, even after the e-mail changed', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: false })
  const existing = await addEperson(app, 'olga@example.edu')
  const first = await samlLogin(app, idp, { targetedId: 'opaque-1234', attributes: { [ATTR.email]: 'olga@example.edu' } })
  assert.equal(first.eperson?.uuid, existing.uuid)
  const renamed = await samlLogin(app, idp, { targetedId: 'opaque-1234', attributes: { [ATTR.email]: 'olga.married@example.edu' } })
  assert.equal(renamed.status, 200)
  assert.equal(renamed.eperson?.uuid, existing.uuid)
  // Without any e-mail at all, the persistent id alone is enough.
  const anonymous = await samlLogin(app, idp, { targetedId: 'opaque-1234' })
  assert.equal(anonymous.eperson?.uuid, existing.uuid)
})

test('pairwise-id is a persistent id too', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: true })
  const first = await samlLogin(app, idp, { attributes: { [ATTR.pairwiseId]: 'HASH42@example.edu', [ATTR.email]: 'p@example.edu' } })
  const second = await samlLogin(app, idp, { attributes: { [ATTR.pairwiseId]: 'HASH42@example.edu', [ATTR.email]: 'other@example.edu' } })
  assert.equal(first.status, 200)
  assert.equal(second.eperson?.uuid, first.eperson?.uuid)
})

test('attribute names are overridden per provider', async (t) => {
  const { test: app, idp } = await startSaml(t, { autoRegister: true, attributes: { email: 'mail', givenName: 'givenName' } })
  const result = await samlLogin(app, idp, { attributes: { mail: 'friendly@example.edu', givenName: 'Frida', [ATTR.email]: 'ignored@example.edu' } })
  assert.equal(result.eperson?.email, 'friendly@example.edu')
})

test('special groups come from attribute values (affiliation=staff → Staff) and the provider, granted for this login only', async (t) => {
  const { test: app, idp } = await startSaml(t, {
    autoRegister: true,
    groups: ['Federated'],
    attributeGroups: [
      { attribute: 'affiliation', value: 'staff', group: 'Staff' },
      { attribute: ATTR.principalName, value: 'boss@example.edu', group: 'Bosses' },
    ],
  })
  const staff = await samlLogin(app, idp, { attributes: { [ATTR.email]: 'olga@example.edu', [ATTR.affiliation]: ['member', 'staff'] } })
  assert.deepEqual(staff.groups, ['Federated', 'Staff'])
  const student = await samlLogin(app, idp, { attributes: { [ATTR.email]: 'olga@example.edu', [ATTR.affiliation]: 'student' } })
  assert.deepEqual(student.groups, ['Federated'], 'the next login without the value does not keep the group')
  const boss = await samlLogin(app, idp, { attributes: { [ATTR.email]: 'boss@example.edu', [ATTR.principalName]: 'boss@example.edu' } })
  assert.deepEqual(boss.groups, ['Bosses', 'Federated'])
  // Membership is per login (the token's sg), never stored.
  const members = await authnDatabase(app.database)
    .db.selectFrom('authn_group_members')
    .innerJoin('authn_groups', 'authn_groups.uuid', 'authn_group_members.group_uuid')
    .select('authn_groups.name')
    .execute()
  assert.deepEqual(members, [{ name: 'Administrator' }])
})
