import assert from 'node:assert/strict'
import { test } from 'node:test'
import { migrateToLatest } from '../../../src/core/db/migrator.ts'
import { migrations } from '../../../src/services/payments/migrations/index.ts'
import { createTestDatabase } from '../../helpers/build-app.ts'
import { basic, createApp, merchantAttributes, merchantFixture, paymentsApp, parseList } from './helpers.ts'

test('creates a merchant from JSON, vnd.api+json and a form, with the creator as a member', async (t) => {
  const { app } = await paymentsApp(t)
  const owner = await createApp(app)
  const headers = { authorization: basic(owner.key) }
  const json = await app.inject({ method: 'POST', url: '/merchants', headers, payload: { ...merchantAttributes, bank: { iban: 'DK50 0040 0440 1162 43' } } })
  assert.equal(json.statusCode, 201, json.body)
  const merchant = json.json().merchant
  assert.match(merchant.id, /^[0-9a-f]{24}$/)
  assert.match(merchant.key, /^[0-9a-f-]{36}$/)
  assert.equal(merchant.test, true)
  assert.equal(merchant.balance, 0)
  assert.deepEqual(merchant.company, { country: 'DK' })
  assert.deepEqual(merchant.bank, { iban: 'DK5000400440116243' })
  assert.deepEqual(merchant.pricing, { rate: 0.0135, flat: { currency: 'EUR', amount: 25 }, dispute: { currency: 'EUR', amount: 1500 } })

  const fetched = await app.inject({ url: `/merchants/${merchant.id}`, headers })
  assert.deepEqual(fetched.json(), { merchant })

  const vnd = await app.inject({
    method: 'POST',
    url: '/merchants',
    headers: { ...headers, 'content-type': 'application/vnd.api+json' },
    payload: JSON.stringify({ ...merchantAttributes, currency: 'DKK' }),
  })
  assert.equal(vnd.statusCode, 201, vnd.body)
  // Fees are converted once into the funding currency: EUR 0.25 at 7.46 → DKK 1.87 (rounded up).
  assert.deepEqual(vnd.json().merchant.pricing.flat, { currency: 'DKK', amount: 187 })

  const form = await app.inject({
    method: 'POST',
    url: '/merchants',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'currency=GBP&email=a%40b.io&website=shop.example&descriptor=Shop&company[country]=GB&company[number]=07654321&test=yes',
  })
  assert.equal(form.statusCode, 201, form.body)
  const formMerchant = form.json().merchant
  assert.equal(formMerchant.test, true)
  assert.deepEqual(formMerchant.company, { country: 'GB', number: '07654321' })

  const mine = parseList(await app.inject({ url: `/identities/${owner.id}/merchants?limit=10`, headers }))
  assert.deepEqual(
    mine.map((item) => item.id),
    [formMerchant.id, vnd.json().merchant.id, merchant.id],
  )
})

test('an empty create names every missing field in one 400 array', async (t) => {
  const { app } = await paymentsApp(t)
  const owner = await createApp(app)
  for (const payload of [undefined, '']) {
    const response = await app.inject({
      method: 'POST',
      url: '/merchants',
      headers: { authorization: basic(owner.key), ...(payload === '' ? { 'content-type': 'application/json' } : {}) },
      ...(payload === '' ? { payload } : {}),
    })
    assert.equal(response.statusCode, 400)
    const fields = response
      .json()
      .map((problem: { field: string }) => problem.field)
      .sort()
    assert.deepEqual(fields, ['company.country', 'currency', 'descriptor', 'email', 'website'])
    for (const problem of response.json()) assert.equal(problem.message, 'is required')
  }
})

test('refuses bad merchant fields, each named', async (t) => {
  const { app } = await paymentsApp(t)
  const owner = await createApp(app)
  const create = (overrides: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/merchants', headers: { authorization: basic(owner.key) }, payload: { ...merchantAttributes, ...overrides } })
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ currency: 'JPY' }, 'currency'],
    [{ currency: 'eur' }, 'currency'],
    [{ descriptor: '£' }, 'descriptor'],
    [{ descriptor: 'x'.repeat(23) }, 'descriptor'],
    [{ email: 'not-an-email' }, 'email'],
    [{ website: 'nowhere' }, 'website'],
    [{ company: { country: 'XX' } }, 'company.country'],
    [{ company: { country: 'dk' } }, 'company.country'],
    [{ bank: { iban: 'DK5000400440116244' } }, 'bank.iban'],
    [{ bank: { iban: 'DK50004004401162' } }, 'bank.iban'],
    [{ test: 'maybe' }, 'test'],
  ]
  for (const [overrides, field] of cases) {
    const response = await create(overrides)
    assert.equal(response.statusCode, 400, `${JSON.stringify(overrides)} → ${response.body}`)
    assert.deepEqual(
      response.json().map((problem: { field: string }) => problem.field),
      [field],
      JSON.stringify(overrides),
    )
  }
  const descriptor = await create({ descriptor: '£' })
  assert.equal(descriptor.json()[0].message, 'Invalid descriptor (see https://github.com/paylike/descriptor)')
  const several = await create({ currency: 'JPY', email: 'x', company: { country: 'ZZ' } })
  assert.deepEqual(
    several
      .json()
      .map((problem: { field: string }) => problem.field)
      .sort(),
    ['company.country', 'currency', 'email'],
  )
})

test('PUT changes only name, e-mail and descriptor, and answers 204 with no body', async (t) => {
  const { merchant, call } = await merchantFixture(t)
  const put = await call('PUT', `/merchants/${merchant.id}`, { name: 'New', email: 'new@example.com', descriptor: 'NEW', currency: 'USD', test: false })
  assert.equal(put.statusCode, 204)
  assert.equal(put.body, '')
  const after = (await call('GET', `/merchants/${merchant.id}`)).json().merchant
  assert.equal(after.name, 'New')
  assert.equal(after.email, 'new@example.com')
  assert.equal(after.descriptor, 'NEW')
  assert.equal(after.currency, 'EUR')
  assert.equal(after.test, true)
  const bad = await call('PUT', `/merchants/${merchant.id}`, { descriptor: 'x'.repeat(30), email: 'nope' })
  assert.equal(bad.statusCode, 400)
  assert.deepEqual(
    bad
      .json()
      .map((problem: { field: string }) => problem.field)
      .sort(),
    ['descriptor', 'email'],
  )
})

test("access: another app gets 403, unknown or malformed ids 404, another identity's list 403", async (t) => {
  const { app, merchant, owner, call } = await merchantFixture(t)
  const stranger = await createApp(app)
  const as = { authorization: basic(stranger.key) }
  for (const [method, url] of [
    ['GET', `/merchants/${merchant.id}`],
    ['PUT', `/merchants/${merchant.id}`],
    ['GET', `/merchants/${merchant.id}/users?limit=5`],
    ['GET', `/merchants/${merchant.id}/apps?limit=5`],
    ['GET', `/merchants/${merchant.id}/lines?limit=5`],
    ['GET', `/merchants/${merchant.id}/transactions?limit=5`],
  ] as const) {
    const response = await app.inject({ method, url, headers: as, ...(method === 'PUT' ? { payload: { name: 'x' } } : {}) })
    assert.equal(response.statusCode, 403, `${method} ${url}`)
    assert.equal(response.json().code, 'forbidden')
  }
  for (const id of ['0123456789abcdef01234567', 'wrong_id', "'; drop table x; --"]) {
    const response = await call('GET', `/merchants/${encodeURIComponent(id)}`)
    assert.equal(response.statusCode, 404, id)
  }
  assert.equal((await app.inject({ url: `/identities/${owner.id}/merchants?limit=5`, headers: as })).statusCode, 403)
  assert.equal((await app.inject({ url: '/identities/nobody/merchants?limit=5', headers: as })).statusCode, 404)
  assert.equal((await app.inject({ url: '/no/such/route', headers: as })).statusCode, 404)
})

test('users: invite (outbox e-mail), list, re-invite, revoke', async (t) => {
  const { app, db, merchant, call } = await merchantFixture(t)
  const invite = await call('POST', `/merchants/${merchant.id}/users`, { email: 'New@X.io' })
  assert.equal(invite.statusCode, 201)
  assert.deepEqual(invite.json(), { isMember: false })
  const outbox = await db.selectFrom('payments_outbox').selectAll().execute()
  assert.equal(outbox.length, 1)
  assert.equal(outbox[0].recipient, 'new@x.io')
  assert.match(outbox[0].body, new RegExp(merchant.id))

  const again = await call('POST', `/merchants/${merchant.id}/users`, { email: 'new@x.io' })
  assert.deepEqual(again.json(), { isMember: true })
  assert.equal((await db.selectFrom('payments_outbox').selectAll().execute()).length, 1, 'no second e-mail')

  const users = parseList<{ id: string; email: string; created: string }>(await call('GET', `/merchants/${merchant.id}/users?limit=5`))
  assert.equal(users.length, 1)
  assert.equal(users[0].email, 'new@x.io')
  assert.match(users[0].id, /^[0-9a-f]{24}$/)

  assert.equal((await call('POST', `/merchants/${merchant.id}/users`, { email: 'bad' })).statusCode, 400)
  const revoke = await call('DELETE', `/merchants/${merchant.id}/users/${users[0].id}`)
  assert.equal(revoke.statusCode, 204)
  assert.equal(revoke.body, '')
  assert.equal((await call('GET', `/merchants/${merchant.id}/users?limit=5`)).body, '[\n]')
  assert.equal((await call('DELETE', `/merchants/${merchant.id}/users/${users[0].id}`)).statusCode, 404)
  void app
})

test('apps of a merchant: add (201, empty body) gives access, revoke (204) takes it away; every member can do both', async (t) => {
  const { app, merchant, owner, call } = await merchantFixture(t)
  const second = await createApp(app, 'Second')
  const as2 = { authorization: basic(second.key) }
  assert.equal((await app.inject({ url: `/merchants/${merchant.id}`, headers: as2 })).statusCode, 403)
  const add = await call('POST', `/merchants/${merchant.id}/apps`, { appId: second.id })
  assert.equal(add.statusCode, 201)
  assert.equal(add.body, '')
  assert.equal((await app.inject({ url: `/merchants/${merchant.id}`, headers: as2 })).statusCode, 200)
  const listed = parseList<{ id: string; name?: string }>(await call('GET', `/merchants/${merchant.id}/apps?limit=10`))
  assert.deepEqual(
    listed.map((item) => [item.id, item.name]),
    [
      [second.id, 'Second'],
      [owner.id, 'Owner'],
    ],
  )
  assert.ok(!JSON.stringify(listed).includes(second.key), 'keys are not listed')

  // The second app revokes the first: members have full access.
  const revoke = await app.inject({ method: 'DELETE', url: `/merchants/${merchant.id}/apps/${owner.id}`, headers: as2 })
  assert.equal(revoke.statusCode, 204)
  assert.equal((await call('GET', `/merchants/${merchant.id}`)).statusCode, 403)
  const last = await app.inject({ method: 'DELETE', url: `/merchants/${merchant.id}/apps/${second.id}`, headers: as2 })
  assert.equal(last.statusCode, 400, 'the last app stays')
  assert.equal((await app.inject({ method: 'POST', url: `/merchants/${merchant.id}/apps`, headers: as2, payload: { appId: 'nope' } })).statusCode, 400)
  assert.equal((await app.inject({ method: 'DELETE', url: `/merchants/${merchant.id}/apps/${owner.id}`, headers: as2 })).statusCode, 404)
})

test('the balance-shard migration carries an existing balance over', async (t) => {
  const database = await createTestDatabase(t)
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '202611220130'))
  await migrateToLatest(database.db, 'payments', before)
  await database.db
    .insertInto('payments_merchants')
    .values({
      id: 'm1',
      key: 'k1',
      name: null,
      currency: 'EUR',
      test: 1,
      email: 'e@x.io',
      website: 'x.io',
      descriptor: 'X',
      company_country: 'DK',
      company_number: null,
      bank_iban: null,
      fee_rate_ppm: 13500,
      fee_flat: 25,
      dispute_fee: 1500,
      tds_mode: 'attempt',
      balance: 4321,
      created: '2026-01-01T00:00:00.000Z',
    })
    .execute()
  await migrateToLatest(database.db, 'payments', migrations)
  const shards = await database.db.selectFrom('payments_balance_shards').selectAll().execute()
  assert.deepEqual(shards, [{ merchant_id: 'm1', shard: 0, balance: 4321 }])
  const test = await paymentsApp(t, { database })
  const owner = await createApp(test.app)
  await test.db.insertInto('payments_merchant_apps').values({ merchant_id: 'm1', app_id: owner.id, created: '2026-01-01T00:00:00.000Z' }).execute()
  assert.equal((await test.app.inject({ url: '/merchants/m1', headers: { authorization: basic(owner.key) } })).json().merchant.balance, 4321)
})
