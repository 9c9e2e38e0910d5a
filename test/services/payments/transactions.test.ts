import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { createDb } from '../../../src/core/db/create-db.ts'
import { withTransaction } from '../../../src/core/db/transaction.ts'
import { isAppError } from '../../../src/core/errors/app-error.ts'
import { inTransaction } from '../../../src/services/payments/modules/transactions/transactions.service.ts'
import { testDatabaseUrl, testDialect } from '../../helpers/build-app.ts'
import { authorize, basic, createApp, createMerchant, merchantFixture, paymentsApp, parseList } from './helpers.ts'

interface Transaction {
  id: string
  amount: number
  pendingAmount: number
  capturedAmount: number
  refundedAmount: number
  voidedAmount: number
  disputedAmount: number
  trail: Array<Record<string, unknown> & { lineId?: string; balance: number; amount: number }>
  [key: string]: unknown
}

test("GET /transactions/{id}: the whole transaction; 404 unknown, 403 another merchant's", async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  const response = await fixture.call('GET', `/transactions/${id}`)
  assert.equal(response.statusCode, 200)
  assert.deepEqual(response.json(), {
    transaction: {
      id,
      merchantId: fixture.merchant.id,
      test: true,
      created: '2026-01-01T00:00:00.000Z',
      currency: 'EUR',
      amount: 300,
      descriptor: 'Coffee & John',
      pendingAmount: 300,
      capturedAmount: 0,
      refundedAmount: 0,
      voidedAmount: 0,
      disputedAmount: 0,
      card: { bin: '410000', last4: '0000', expiry: '2030-08-31T23:59:59.999Z', scheme: 'visa', code: { present: true } },
      custom: { orderId: 'o-1' },
      tds: 'full',
      recurring: false,
      successful: true,
      error: false,
      trail: [],
    },
  })
  assert.equal((await fixture.call('GET', '/transactions/wrong_id')).statusCode, 404)
  const stranger = await createApp(fixture.app)
  const other = await fixture.app.inject({ url: `/transactions/${id}`, headers: { authorization: basic(stranger.key) } })
  assert.equal(other.statusCode, 403)
  for (const kind of ['captures', 'refunds', 'voids']) {
    const denied = await fixture.app.inject({
      method: 'POST',
      url: `/transactions/${id}/${kind}`,
      headers: { authorization: basic(stranger.key) },
      payload: { amount: 1 },
    })
    assert.equal(denied.statusCode, 403, kind)
    assert.equal((await fixture.call('POST', `/transactions/nope/${kind}`, { amount: 1 })).statusCode, 404)
  }
})

test("reads and captures never see another database transaction's uncommitted writes", async (t) => {
  // On SQLite the hot paths run their statements straight on the one connection, past Kysely's
  // mutex, only when no transaction is open on it; otherwise they must wait for it to end.
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  let answers: Promise<[{ statusCode: number; json(): { transaction: Transaction } }, { statusCode: number; json(): { transaction: Transaction } }]> | undefined
  await assert.rejects(
    withTransaction({ db: fixture.db, dialect: fixture.database.dialect }, async (trx) => {
      await trx.updateTable('payments_transactions').set({ captured_amount: 700 }).where('id', '=', id).execute()
      answers = Promise.all([fixture.call('GET', `/transactions/${id}`), fixture.call('POST', `/transactions/${id}/captures`, { amount: 400 })])
      // Long enough for both requests to reach the database while this transaction is open.
      await new Promise((resolve) => setTimeout(resolve, 100))
      throw new Error('rolled back')
    }),
    /rolled back/,
  )
  assert.ok(answers)
  const [read, capture] = await answers
  assert.equal(read.statusCode, 200)
  assert.equal(read.json().transaction.capturedAmount, 0)
  assert.equal(capture.statusCode, 201)
  assert.equal(capture.json().transaction.capturedAmount, 400)
  assert.equal(capture.json().transaction.trail.length, 1)
})

test('the amount rules, step by step (pending = amount − captured − voided; refunds leave captured alone)', async (t) => {
  const fixture = await merchantFixture(t)
  const steps: Array<{ kind: 'captures' | 'refunds' | 'voids'; body: Record<string, unknown>; status: number; expect?: Partial<Transaction>; field?: string }> =
    [
      { kind: 'captures', body: { amount: 100, currency: 'EUR' }, status: 201, expect: { capturedAmount: 100, pendingAmount: 200 } },
      { kind: 'captures', body: { amount: 400 }, status: 400, field: 'amount' },
      { kind: 'captures', body: { amount: 100, currency: 'USD' }, status: 400, field: 'currency' },
      { kind: 'captures', body: { amount: 100 }, status: 201, expect: { capturedAmount: 200, pendingAmount: 100 } },
      { kind: 'refunds', body: { amount: 120 }, status: 201, expect: { capturedAmount: 200, refundedAmount: 120, pendingAmount: 100 } },
      { kind: 'refunds', body: { amount: 81 }, status: 400, field: 'amount' },
      { kind: 'voids', body: { amount: 101 }, status: 400, field: 'amount' },
      { kind: 'voids', body: { amount: 60 }, status: 201, expect: { voidedAmount: 60, pendingAmount: 40 } },
      { kind: 'captures', body: { amount: 40, descriptor: '' }, status: 201, expect: { capturedAmount: 240, pendingAmount: 0 } },
      { kind: 'captures', body: { amount: 1 }, status: 400, field: 'amount' },
      { kind: 'voids', body: { amount: 1 }, status: 400, field: 'amount' },
      { kind: 'refunds', body: { amount: 120 }, status: 201, expect: { refundedAmount: 240 } },
      { kind: 'refunds', body: { amount: 1 }, status: 400, field: 'amount' },
    ]
  const id = await authorize(fixture, fixture.merchant.id)
  for (const [index, step] of steps.entries()) {
    const response = await fixture.call('POST', `/transactions/${id}/${step.kind}`, step.body)
    assert.equal(response.statusCode, step.status, `step ${index}: ${response.body}`)
    if (step.expect) {
      const transaction = response.json().transaction as Transaction
      for (const [key, value] of Object.entries(step.expect)) assert.equal(transaction[key], value, `step ${index} ${key}`)
      assert.equal(transaction.pendingAmount, transaction.amount - transaction.capturedAmount - transaction.voidedAmount)
    }
    if (step.field)
      assert.deepEqual(
        response.json().map((problem: { field: string }) => problem.field),
        [step.field],
        `step ${index}`,
      )
  }
  const over = await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 1 })
  assert.deepEqual(over.json(), [{ field: 'amount', message: 'Can refund at most EUR 0.00' }])

  const final = (await fixture.call('GET', `/transactions/${id}`)).json().transaction as Transaction
  assert.deepEqual(
    final.trail.map((entry) => [Object.keys(entry).find((key) => ['capture', 'refund', 'void'].includes(key)), entry.amount]),
    [
      ['capture', 100],
      ['capture', 100],
      ['refund', 120],
      ['void', 60],
      ['capture', 40],
      ['refund', 120],
    ],
  )
  // A capture with an empty descriptor falls back to the transaction's.
  assert.equal(final.trail[4].descriptor, 'Coffee & John')
  // A void moves no money: no line, no balance effect.
  // Each entry names who made it: here the merchant's app, by its key.
  assert.deepEqual(final.trail[3], { void: true, created: '2026-01-01T00:00:00.000Z', amount: 60, balance: 0, fee: { flat: 0, rate: 0 }, actor: { type: 'app', id: fixture.owner.id } })
})

test('captures and refunds write ledger lines in the same transaction; the balance is their sum', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 10_000 })
  const capture = (await fixture.call('POST', `/transactions/${id}/captures`, { amount: 10_000, descriptor: 'ORDER 1' })).json().transaction as Transaction
  const entry = capture.trail[0]
  // EUR 100.00 on an EUR merchant: no conversion; fee 1.35 % = 135 plus 25 flat.
  assert.deepEqual(entry, {
    capture: true,
    created: '2026-01-01T00:00:00.000Z',
    amount: 10_000,
    balance: 10_000 - 135 - 25,
    fee: { flat: 25, rate: 135 },
    descriptor: 'ORDER 1',
    lineId: entry.lineId,
    actor: { type: 'app', id: fixture.owner.id },
  })
  const lines = parseList(await fixture.call('GET', `/merchants/${fixture.merchant.id}/lines?limit=1`))
  assert.deepEqual(lines, [
    {
      id: entry.lineId,
      merchantId: fixture.merchant.id,
      test: true,
      created: '2026-01-01T00:00:00.000Z',
      balance: 9840,
      fee: 160,
      transactionId: id,
      amount: { currency: 'EUR', amount: 10_000 },
      capture: true,
    },
  ])
  const line = await fixture.call('GET', `/lines/${entry.lineId}`)
  assert.deepEqual(line.json(), { line: lines[0] })
  assert.equal((await fixture.call('GET', '/lines/nope')).statusCode, 404)

  const refund = (await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 2500 })).json().transaction as Transaction
  assert.deepEqual(refund.trail[1].balance, -2500)
  const merchant = (await fixture.call('GET', `/merchants/${fixture.merchant.id}`)).json().merchant
  assert.equal(merchant.balance, 9840 - 2500)
  const all = parseList<{ balance: number; refund?: boolean }>(await fixture.call('GET', `/merchants/${fixture.merchant.id}/lines?limit=10`))
  assert.equal(all.length, 2)
  assert.equal(all[0].refund, true)
  assert.equal(
    all.reduce((sum, item) => sum + item.balance, 0),
    merchant.balance,
  )
})

test('captures in another currency convert at the table rate with the markup; rounding never favours the merchant', async (t) => {
  const fixture = await merchantFixture(t)
  const dkk = await createMerchant(fixture.app, fixture.owner.key, { currency: 'DKK' })
  // USD 10.00 → DKK: 1000 × 7.46 / 1.16 = 6431.03…; less 2 % markup = 6302.41… → 6302 (down).
  const id = await authorize(fixture, dkk.id, { amount: 1000, currency: 'USD' })
  const capture = (await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1000 })).json().transaction as Transaction
  const flat = 187 // EUR 0.25 in DKK, rounded up
  const rate = Math.ceil((6302 * 13_500) / 1_000_000) // 85.077 → 86
  assert.deepEqual(capture.trail[0].fee, { flat, rate })
  assert.equal(capture.trail[0].balance, 6302 - flat - rate)
  // A refund of USD 1.00 adds the markup and rounds up: 100 × 7.46 / 1.16 × 1.02 = 655.96… → 656.
  const refund = (await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 100 })).json().transaction as Transaction
  assert.equal(refund.trail[1].balance, -656)
  // JPY has no minor unit: JPY 1000 → EUR 1000 / 180 = 5.5555… EUR → 555.55… cents × 0.98 = 544.44 → 544.
  const jpy = await authorize(fixture, fixture.merchant.id, { amount: 1000, currency: 'JPY' })
  const jpyCapture = (await fixture.call('POST', `/transactions/${jpy}/captures`, { amount: 1000 })).json().transaction as Transaction
  assert.equal(jpyCapture.trail[0].balance, 544 - 25 - 8)
})

test('captures, refunds and voids accept form bodies (amount=100)', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  const response = await fixture.app.inject({
    method: 'POST',
    url: `/transactions/${id}/captures`,
    headers: { ...fixture.headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'amount=100&currency=EUR',
  })
  assert.equal(response.statusCode, 201, response.body)
  assert.equal(response.json().transaction.capturedAmount, 100)
  for (const body of [{}, { amount: 0 }, { amount: -5 }, { amount: 1.5 }, { amount: 'ten' }]) {
    const bad = await fixture.call('POST', `/transactions/${id}/captures`, body)
    assert.equal(bad.statusCode, 400, JSON.stringify(body))
    assert.deepEqual(
      bad.json().map((problem: { field: string }) => problem.field),
      ['amount'],
    )
  }
  const malformed = await fixture.app.inject({
    method: 'POST',
    url: `/transactions/${id}/captures`,
    headers: { ...fixture.headers, 'content-type': 'application/json' },
    payload: '{"amount":',
  })
  assert.equal(malformed.statusCode, 400)
  assert.ok(Array.isArray(malformed.json()))
})

test('50 parallel captures of 10 on 300: exactly 30 succeed, and the ledger sums', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 300 })
  const responses = await Promise.all(Array.from({ length: 50 }, () => fixture.call('POST', `/transactions/${id}/captures`, { amount: 10 })))
  const statuses = responses.map((response) => response.statusCode)
  assert.equal(statuses.filter((status) => status === 201).length, 30, statuses.join(','))
  assert.ok(statuses.every((status) => status === 201 || status === 400 || status === 409))
  const transaction = (await fixture.call('GET', `/transactions/${id}`)).json().transaction as Transaction
  assert.equal(transaction.capturedAmount, 300)
  assert.equal(transaction.trail.length, 30)
  const lines = parseList<{ balance: number }>(await fixture.call('GET', `/merchants/${fixture.merchant.id}/lines?limit=100`))
  assert.equal(lines.length, 30)
  const merchant = (await fixture.call('GET', `/merchants/${fixture.merchant.id}`)).json().merchant
  assert.equal(
    lines.reduce((sum, line) => sum + line.balance, 0),
    merchant.balance,
  )
})

test('two Triad instances on one PostgreSQL never capture more than the amount', { skip: testDialect !== 'postgres' && 'PostgreSQL only' }, async (t) => {
  const first = await merchantFixture(t)
  const { current_schema: schema } = (await sql<{ current_schema: string }>`select current_schema()`.execute(first.database.db)).rows[0]
  const secondDatabase = await createDb(testDatabaseUrl, { schema, poolSize: 5 })
  t.after(() => secondDatabase.destroy())
  const second = await paymentsApp(t, { database: secondDatabase })
  const id = await authorize(first, first.merchant.id, { amount: 300 })
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, index) =>
      (index % 2 === 0 ? first.app : second.app).inject({
        method: 'POST',
        url: `/transactions/${id}/captures`,
        headers: first.headers,
        payload: { amount: 10 },
      }),
    ),
  )
  assert.equal(responses.filter((response) => response.statusCode === 201).length, 30)
  const transaction = (await second.app.inject({ url: `/transactions/${id}`, headers: first.headers })).json().transaction as Transaction
  assert.equal(transaction.capturedAmount, 300)
})

test('lists of transactions are full transactions, newest first', async (t) => {
  const fixture = await merchantFixture(t)
  const ids: string[] = []
  for (let index = 0; index < 3; index++) {
    fixture.clock.advance(1000)
    ids.push(await authorize(fixture, fixture.merchant.id, { amount: 100 + index }))
  }
  await fixture.call('POST', `/transactions/${ids[1]}/captures`, { amount: 50 })
  const list = parseList<Transaction>(await fixture.call('GET', `/merchants/${fixture.merchant.id}/transactions?limit=2`))
  assert.deepEqual(
    list.map((item) => item.id),
    [ids[2], ids[1]],
  )
  assert.equal(list[1].trail.length, 1)
  assert.equal(list[1].capturedAmount, 50)
})

test('Idempotency-Key replays the first response for 24 h and refuses another body with 409', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  const key = { 'idempotency-key': 'capture-1' }
  const first = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 }, key)
  assert.equal(first.statusCode, 201)
  const replay = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 }, key)
  assert.equal(replay.statusCode, 201)
  assert.equal(replay.body, first.body)
  assert.equal(replay.headers['idempotent-replayed'], 'true')
  const different = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 50 }, key)
  assert.equal(different.statusCode, 409)
  assert.equal(different.json().code, 'conflict')
  assert.equal((await fixture.call('GET', `/transactions/${id}`)).json().transaction.capturedAmount, 100, 'captured once')

  // Keys belong to one app: another app's identical key is a separate request.
  const other = await createApp(fixture.app)
  await fixture.call('POST', `/merchants/${fixture.merchant.id}/apps`, { appId: other.id })
  const theirs = await fixture.app.inject({
    method: 'POST',
    url: `/transactions/${id}/captures`,
    headers: { authorization: basic(other.key), ...key },
    payload: { amount: 100 },
  })
  assert.equal(theirs.statusCode, 201)
  assert.equal(theirs.json().transaction.capturedAmount, 200)

  // A 4xx is kept too (the same request gets the same answer); after 24 h the key is new again.
  const refused = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 500 }, { 'idempotency-key': 'too-much' })
  assert.equal(refused.statusCode, 400)
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 500 }, { 'idempotency-key': 'too-much' })).body, refused.body)
  fixture.clock.advance(24 * 3_600_000 + 1)
  const later = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 }, key)
  assert.equal(later.statusCode, 201)
  assert.equal(later.json().transaction.capturedAmount, 300)
  assert.equal(later.headers['idempotent-replayed'], undefined)
})

test('over the rate limit → 429 with Retry-After, per key', async (t) => {
  const fixture = await merchantFixture(t, { env: { PAYMENTS_RATE_LIMIT: '5/min' } })
  const statuses: number[] = []
  let last = await fixture.call('GET', '/me')
  for (let index = 0; index < 5; index++) {
    last = await fixture.call('GET', '/me')
    statuses.push(last.statusCode)
  }
  // Two requests of the fixture (create app, create merchant) used the address's and key's budgets.
  assert.equal(last.statusCode, 429, statuses.join(','))
  assert.match(String(last.headers['retry-after']), /^\d+$/)
  assert.equal(last.json().code, 'rate_limited')
  fixture.clock.advance(60_000)
  assert.equal((await fixture.call('GET', '/me')).statusCode, 200)
})

test('a conflict that outlives the database retries answers 409, not 500', async (t) => {
  const fixture = await merchantFixture(t)
  const ctx = {
    database: { db: fixture.db, dialect: fixture.database.dialect },
  } as unknown as Parameters<typeof inTransaction>[0]
  let attempts = 0
  const error = await inTransaction(ctx, async () => {
    attempts++
    throw Object.assign(new Error('could not serialize access'), { code: '40001' })
  }).catch((caught: unknown) => caught)
  assert.ok(isAppError(error))
  assert.equal(error.status, 409)
  assert.equal(attempts, 8)
})
