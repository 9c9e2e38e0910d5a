import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { authorize, paymentsApp } from './helpers.ts'

// The official Node client, unmodified (a dev dependency): it reads list bodies line by line,
// expects compact objects, 201 on POST and 204 with no body on PUT and DELETE.
const require = createRequire(import.meta.url)

interface Cursor<T> {
  limit(n?: number): Cursor<T>
  before(id: string): Cursor<T>
  after(id: string): Cursor<T>
  since(date: Date): Cursor<T>
  until(date: Date): Cursor<T>
  filter(filter: Record<string, unknown>): Cursor<T>
  batchSize(n: number): Cursor<T>
  toArray(): Promise<T[]>
}
type Item = Record<string, unknown> & { id: string }
interface PaylikeClient {
  setKey(key: string): void
  apps: { create(o?: object): Promise<Item & { key: string }>; findOne(): Promise<Item>; merchants: { find(appId: string): Cursor<Item> } }
  merchants: {
    create(o?: object): Promise<string>
    update(id: string, o: object): Promise<unknown>
    findOne(id: string): Promise<Item>
    users: { add(id: string, o: object): Promise<unknown>; revoke(id: string, userId: string): Promise<unknown>; find(id: string): Cursor<Item> }
    apps: { add(id: string, o: object): Promise<unknown>; revoke(id: string, appId: string): Promise<unknown>; find(id: string): Cursor<Item> }
    lines: { find(id: string): Cursor<Item> }
    transactions: { create(id: string, o: object): Promise<string>; find(id: string): Cursor<Item> }
  }
  transactions: {
    capture(id: string, o: object): Promise<unknown>
    refund(id: string, o: object): Promise<unknown>
    void(id: string, o: object): Promise<unknown>
    findOne(id: string): Promise<Item & Record<string, number>>
  }
  cards: { create(merchantId: string, o: object): Promise<string>; findOne(id: string): Promise<Item> }
}
type ErrorClass = new (...args: never[]) => Error
const Paylike = require('paylike') as ((key: string | undefined, options: { url: string }) => PaylikeClient) & {
  ValidationError: ErrorClass
  AuthorizationError: ErrorClass
  PermissionsError: ErrorClass
  NotFoundError: ErrorClass
  ConflictError: ErrorClass
}

const merchantAttributes = {
  company: { country: 'DK' },
  currency: 'DKK',
  email: 'john@example.com',
  website: 'https://example.com',
  descriptor: 'Coffee & John',
  test: true,
}

async function rejects(promise: Promise<unknown>, type: ErrorClass): Promise<Error & { data?: unknown }> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`)
    return error as Error & { data?: unknown }
  }
  assert.fail(`expected ${type.name}`)
}

test('the official paylike Node client works unmodified through its whole surface', async (t) => {
  const fixture = await paymentsApp(t)
  const url = await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const paylike = Paylike(undefined, { url })

  // apps: create without a key (the client sends ":undefined"), then use the key.
  const app = await paylike.apps.create({ name: 'Coffee & John' })
  assert.match(app.key, /^[0-9a-f-]{36}$/)
  await rejects(paylike.apps.findOne(), Paylike.AuthorizationError)
  paylike.setKey(app.key)
  const identity = await paylike.apps.findOne()
  assert.equal(identity.id, app.id)
  assert.equal(identity.name, 'Coffee & John')

  // merchants
  const invalid = await rejects(paylike.merchants.create(), Paylike.ValidationError)
  assert.ok(Array.isArray(invalid.data))
  const merchantIds: string[] = []
  for (let index = 0; index < 5; index++) {
    fixture.clock.advance(1000)
    merchantIds.push(await paylike.merchants.create({ ...merchantAttributes, name: `m${index}` }))
  }
  const merchantId = merchantIds[0]
  assert.match(merchantId, /^[0-9a-f]{24}$/)
  assert.equal(await paylike.merchants.update(merchantId, { name: 'Coffee John' }), undefined)
  const merchant = await paylike.merchants.findOne(merchantId)
  assert.equal(merchant.name, 'Coffee John')
  await rejects(paylike.merchants.findOne('wrong_id'), Paylike.NotFoundError)

  // cursors: toArray, filter with a boolean (sent as y), limit, paging by batch, since/until
  const all = await paylike.apps.merchants.find(app.id).limit(10).toArray()
  assert.deepEqual(
    all.map((item) => item.id),
    [...merchantIds].reverse(),
  )
  const selection = await paylike.apps.merchants.find(app.id).filter({ test: true }).limit(2).toArray()
  assert.deepEqual(selection, all.slice(0, 2))
  const paged = await paylike.apps.merchants.find(app.id).batchSize(2).toArray()
  assert.deepEqual(paged, all, 'pages of 2 via before=<last id>')
  const forward = await paylike.apps.merchants.find(app.id).after(merchantIds[1]).batchSize(2).toArray()
  assert.deepEqual(
    forward.map((item) => item.id),
    merchantIds.slice(2),
    'after alone walks forward, oldest first',
  )
  const since = await paylike.apps.merchants.find(app.id).since(new Date('2026-01-01T00:00:03.000Z')).toArray()
  assert.deepEqual(
    since.map((item) => item.id),
    merchantIds.slice(2),
  )
  const until = await paylike.apps.merchants.find(app.id).until(new Date('2026-01-01T00:00:03.000Z')).toArray()
  assert.deepEqual(
    until.map((item) => item.id),
    merchantIds.slice(0, 2).reverse(),
  )

  // users
  assert.equal(await paylike.merchants.users.add(merchantId, { email: 'one@example.com' }), undefined)
  const users = await paylike.merchants.users.find(merchantId).limit().toArray()
  assert.equal(users.length, 1)
  assert.equal(users[0].email, 'one@example.com')
  assert.equal(await paylike.merchants.users.revoke(merchantId, users[0].id), undefined)
  assert.deepEqual(await paylike.merchants.users.find(merchantId).toArray(), [])

  // apps of a merchant
  const other = Paylike(undefined, { url })
  const second = await other.apps.create({})
  other.setKey(second.key)
  await rejects(other.merchants.findOne(merchantId), Paylike.PermissionsError)
  assert.equal(await paylike.merchants.apps.add(merchantId, { appId: second.id }), undefined)
  assert.equal((await paylike.merchants.apps.find(merchantId).toArray()).length, 2)
  assert.equal((await other.merchants.findOne(merchantId)).id, merchantId)
  assert.equal(await paylike.merchants.apps.revoke(merchantId, second.id), undefined)
  assert.equal((await paylike.merchants.apps.find(merchantId).toArray()).length, 1)

  // transactions: a customer's authorization, then recurring, capture, refund, void
  const transactionId = await authorize(fixture, merchantId, { amount: 300, currency: 'EUR' })
  const recurringId = await paylike.merchants.transactions.create(merchantId, {
    transactionId,
    currency: 'EUR',
    amount: 200,
    custom: { source: 'node client test' },
  })
  assert.match(recurringId, /^[0-9a-f]{24}$/)
  const listed = await paylike.merchants.transactions.find(merchantId).limit(10).toArray()
  assert.deepEqual(
    listed.map((item) => item.id),
    [recurringId, transactionId],
  )
  assert.equal(await paylike.transactions.capture(transactionId, { amount: 200, currency: 'EUR' }), undefined)
  assert.equal(await paylike.transactions.refund(transactionId, { amount: 120 }), undefined)
  assert.equal(await paylike.transactions.void(transactionId, { amount: 60 }), undefined)
  const transaction = await paylike.transactions.findOne(transactionId)
  assert.deepEqual([transaction.capturedAmount, transaction.refundedAmount, transaction.voidedAmount, transaction.pendingAmount], [200, 120, 60, 40])
  const tooMuch = await rejects(paylike.transactions.capture(transactionId, { amount: 41 }), Paylike.ValidationError)
  assert.deepEqual(tooMuch.data, [{ field: 'amount', message: 'Can capture at most EUR 0.40' }])
  await rejects(other.transactions.findOne(transactionId), Paylike.PermissionsError)
  await rejects(paylike.transactions.findOne('wrong_id'), Paylike.NotFoundError)

  // lines
  const lines = await paylike.merchants.lines.find(merchantId).limit(1).toArray()
  assert.equal(lines.length, 1)
  assert.equal(lines[0].refund, true)

  // cards (deprecated), and a charge from a saved card
  const cardId = await paylike.cards.create(merchantId, { transactionId })
  const card = await paylike.cards.findOne(cardId)
  assert.deepEqual(card, { id: cardId, merchantId, created: card.created, bin: '410000', last4: '0000', expiry: '2030-08-31T23:59:59.999Z', scheme: 'visa' })
  const fromCard = await paylike.merchants.transactions.create(merchantId, { cardId, currency: 'EUR', amount: 100 })
  assert.match(fromCard, /^[0-9a-f]{24}$/)

  // a declined recurring charge: ValidationError carrying the processing error
  const expiring = await authorize(fixture, merchantId, { expiry: { year: 2026, month: 1 } })
  fixture.clock.set('2026-02-01T00:00:00.000Z')
  const declined = await rejects(
    paylike.merchants.transactions.create(merchantId, { transactionId: expiring, currency: 'EUR', amount: 100 }),
    Paylike.ValidationError,
  )
  assert.deepEqual(declined.data, { code: 6, text: 'Card expired', message: 'Card expired', client: true, merchant: false })
})
