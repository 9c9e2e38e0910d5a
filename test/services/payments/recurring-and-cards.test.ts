import assert from 'node:assert/strict'
import { test } from 'node:test'
import { authorize, basic, createApp, createMerchant, merchantFixture, parseList } from './helpers.ts'

test('a recurring transaction from an earlier one copies the card and falls back to the merchant descriptor', async (t) => {
  const fixture = await merchantFixture(t)
  const base = await authorize(fixture, fixture.merchant.id, { cardRef: 'card-1' })
  fixture.clock.advance(5000)
  const created = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, {
    transactionId: base,
    currency: 'EUR',
    amount: 300,
    custom: { a: 1 },
  })
  assert.equal(created.statusCode, 201, created.body)
  const { transaction } = created.json()
  assert.deepEqual(Object.keys(transaction), ['id'])
  const fetched = (await fixture.call('GET', `/transactions/${transaction.id}`)).json().transaction
  assert.equal(fetched.amount, 300)
  assert.equal(fetched.pendingAmount, 300)
  assert.equal(fetched.capturedAmount, 0)
  assert.equal(fetched.recurring, true)
  assert.equal(fetched.successful, true)
  assert.equal(fetched.error, false)
  assert.deepEqual(fetched.trail, [])
  assert.deepEqual(fetched.custom, { a: 1 })
  assert.equal(fetched.descriptor, 'Coffee & John')
  assert.deepEqual(fetched.card, { bin: '410000', last4: '0000', expiry: '2030-08-31T23:59:59.999Z', scheme: 'visa', code: { present: false } })
  assert.equal(fetched.tds, undefined)

  // The alias authorizationId, the Node client's `cardId: false`, and a descriptor of its own.
  const alias = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, {
    authorizationId: base,
    cardId: false,
    currency: 'EUR',
    amount: 100,
    descriptor: 'SUB 2',
  })
  assert.equal(alias.statusCode, 201, alias.body)
  assert.equal((await fixture.call('GET', `/transactions/${alias.json().transaction.id}`)).json().transaction.descriptor, 'SUB 2')
  const withCardFalse = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, {
    transactionId: base,
    cardId: false,
    currency: 'EUR',
    amount: 100,
  })
  assert.equal(withCardFalse.statusCode, 201)

  // And it can be captured like any other.
  const capture = await fixture.call('POST', `/transactions/${transaction.id}/captures`, { amount: 300 })
  assert.equal(capture.statusCode, 201)
})

test('refuses a recurring request without a source, amount or currency, each named', async (t) => {
  const fixture = await merchantFixture(t)
  const base = await authorize(fixture, fixture.merchant.id)
  const url = `/merchants/${fixture.merchant.id}/transactions`
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{ currency: 'EUR', amount: 100 }, ['transactionId']],
    [{ transactionId: base, currency: 'EUR' }, ['amount']],
    [{ transactionId: base, amount: 100 }, ['currency']],
    [{}, ['amount', 'currency']],
    [{ transactionId: 'nope', currency: 'EUR', amount: 1 }, ['transactionId']],
    [{ cardId: 'nope', currency: 'EUR', amount: 1 }, ['cardId']],
    [{ transactionId: base, currency: 'XYZ', amount: 1 }, ['currency']],
    [{ transactionId: base, currency: 'EUR', amount: 1, descriptor: 'é' }, ['descriptor']],
  ]
  for (const [body, fields] of cases) {
    const response = await fixture.call('POST', url, body)
    assert.equal(response.statusCode, 400, JSON.stringify(body))
    assert.deepEqual(
      response
        .json()
        .map((problem: { field: string }) => problem.field)
        .sort(),
      fields,
      JSON.stringify(body),
    )
  }
  // A currency without a conversion rate is a processing error (1 Invalid currency).
  const noRate = await fixture.call('POST', url, { transactionId: base, currency: 'ARS', amount: 1 })
  assert.equal(noRate.statusCode, 400)
  assert.deepEqual(noRate.json(), { code: 1, text: 'Invalid currency', message: 'Invalid currency', client: true, merchant: true })
  // Another merchant's transaction is not a valid base.
  const other = await createMerchant(fixture.app, fixture.owner.key)
  const foreign = await fixture.call('POST', `/merchants/${other.id}/transactions`, { transactionId: base, currency: 'EUR', amount: 1 })
  assert.deepEqual(
    foreign.json().map((problem: { field: string }) => problem.field),
    ['transactionId'],
  )
  const stranger = await createApp(fixture.app)
  assert.equal(
    (
      await fixture.app.inject({
        method: 'POST',
        url,
        headers: { authorization: basic(stranger.key) },
        payload: { transactionId: base, currency: 'EUR', amount: 1 },
      })
    ).statusCode,
    403,
  )
})

test('declines answer 400 with one processing error, and the declined transaction is kept', async (t) => {
  // Live merchants need a vault key supplied from outside (test/services/payments/vault/secrets.test.ts).
  const fixture = await merchantFixture(t, { env: { PAYMENTS_VAULT_KEY: 'c3'.repeat(32) } })
  const url = `/merchants/${fixture.merchant.id}/transactions`
  const expiring = await authorize(fixture, fixture.merchant.id, { expiry: { year: 2026, month: 2 } })
  fixture.clock.set('2026-03-01T00:00:00.000Z')
  const expired = await fixture.call('POST', url, { transactionId: expiring, currency: 'EUR', amount: 100 })
  assert.equal(expired.statusCode, 400)
  assert.deepEqual(expired.json(), { code: 6, text: 'Card expired', message: 'Card expired', client: true, merchant: false })
  const [declined] = await fixture.db.selectFrom('payments_transactions').selectAll().where('recurring', '=', 1).execute()
  assert.equal(declined.successful, 0)
  const shown = (await fixture.call('GET', `/transactions/${declined.id}`)).json().transaction
  assert.equal(shown.successful, false)
  assert.equal(shown.error.code, 6)
  const capture = await fixture.call('POST', `/transactions/${declined.id}/captures`, { amount: 1 })
  assert.equal(capture.statusCode, 400)

  const declinedOnly = parseList<{ id: string }>(await fixture.call('GET', `/merchants/${fixture.merchant.id}/transactions?limit=10&filter[successful]=n`))
  assert.deepEqual(
    declinedOnly.map((item) => item.id),
    [declined.id],
  )
  const recurringOnly = parseList<{ id: string }>(
    await fixture.call('GET', `/merchants/${fixture.merchant.id}/transactions?limit=10&filter[recurring]=y&filter[successful]=y`),
  )
  assert.deepEqual(recurringOnly, [])

  // The sandbox card's balance, limit and status carry over from charge to charge.
  const base = await authorize(fixture, fixture.merchant.id, { cardRef: 'sandbox-card' })
  await fixture.db
    .insertInto('payments_sandbox_cards')
    .values({
      card_ref: 'sandbox-card',
      status: 'valid',
      balance_currency: 'EUR',
      balance: 250,
      limit_currency: 'EUR',
      limit_amount: 200,
      updated: '2026-01-01T00:00:00.000Z',
    })
    .execute()
  const charge = (amount: number, currency = 'EUR') => fixture.call('POST', url, { transactionId: base, currency, amount })
  assert.equal((await charge(201)).json().code, 25, 'over the card limit')
  assert.equal((await charge(200)).statusCode, 201)
  const insufficient = await charge(51)
  assert.deepEqual(insufficient.json(), { code: 7, text: 'Insufficient funds', message: 'Insufficient funds', client: true, merchant: false })
  assert.equal((await charge(50)).statusCode, 201)
  assert.equal((await charge(1)).json().code, 7)
  await fixture.db.updateTable('payments_sandbox_cards').set({ status: 'lost', balance: null, limit_amount: null }).execute()
  assert.equal((await charge(1)).json().code, 10)
  await fixture.db.updateTable('payments_sandbox_cards').set({ status: 'disabled' }).execute()
  assert.equal((await charge(1)).json().code, 9)

  // A live merchant has no acquirer configured: a clear processing error.
  const live = await createMerchant(fixture.app, fixture.owner.key, { test: false })
  const liveBase = await authorize(fixture, live.id)
  const refused = await fixture.call('POST', `/merchants/${live.id}/transactions`, { transactionId: liveBase, currency: 'EUR', amount: 1 })
  assert.equal(refused.statusCode, 400)
  assert.deepEqual(refused.json(), {
    code: 12,
    text: 'Error, please try again or contact us',
    message: 'No card acquirer is configured for live merchants',
    client: true,
    merchant: true,
  })
})

test('saved cards (deprecated): create from a transaction, fetch, charge', async (t) => {
  const fixture = await merchantFixture(t)
  const base = await authorize(fixture, fixture.merchant.id, { cardRef: 'ref-9' })
  const created = await fixture.call('POST', `/merchants/${fixture.merchant.id}/cards`, { transactionId: base, notes: 'VIP' })
  assert.equal(created.statusCode, 201, created.body)
  const { card } = created.json()
  assert.deepEqual(Object.keys(card), ['id'])
  const fetched = await fixture.call('GET', `/cards/${card.id}`)
  assert.deepEqual(fetched.json(), {
    card: {
      id: card.id,
      merchantId: fixture.merchant.id,
      created: '2026-01-01T00:00:00.000Z',
      bin: '410000',
      last4: '0000',
      expiry: '2030-08-31T23:59:59.999Z',
      scheme: 'visa',
      notes: 'VIP',
    },
  })
  const charge = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, { cardId: card.id, currency: 'EUR', amount: 100 })
  assert.equal(charge.statusCode, 201, charge.body)
  const row = await fixture.db
    .selectFrom('payments_transactions')
    .select(['card_ref', 'source_transaction_id'])
    .where('id', '=', charge.json().transaction.id)
    .executeTakeFirstOrThrow()
  assert.deepEqual(row, { card_ref: 'ref-9', source_transaction_id: base })

  assert.equal((await fixture.call('GET', '/cards/nope')).statusCode, 404)
  assert.deepEqual(
    (await fixture.call('POST', `/merchants/${fixture.merchant.id}/cards`, {})).json().map((problem: { field: string }) => problem.field),
    ['transactionId'],
  )
  assert.equal((await fixture.call('POST', `/merchants/${fixture.merchant.id}/cards`, { transactionId: 'nope' })).statusCode, 400)
  const stranger = await createApp(fixture.app)
  assert.equal((await fixture.app.inject({ url: `/cards/${card.id}`, headers: { authorization: basic(stranger.key) } })).statusCode, 403)
})
