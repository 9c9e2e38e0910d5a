import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { testDialect } from '../../helpers/build-app.ts'
import { authorize, basic, createApp, merchantFixture, merchantAttributes } from './helpers.ts'

// Issue 35: a request sent again with its Idempotency-Key is applied at most once; its writes and
// its stored answer commit together. (Lost COMMITs over a real connection: test/faults/postgres-errors.test.ts.)

type Fixture = Awaited<ReturnType<typeof merchantFixture>>

/** Sends `send` three times at once and once after, with one key: one fresh answer, the rest replays of it, byte for byte. */
async function sentFourTimes(send: (key: Record<string, string>) => ReturnType<Fixture['call']>, key: string) {
  const headers = { 'idempotency-key': key }
  const racing = await Promise.all([send(headers), send(headers), send(headers)])
  const later = await send(headers)
  const all = [...racing, later]
  const fresh = all.filter((response) => response.headers['idempotent-replayed'] === undefined)
  assert.equal(fresh.length, 1, all.map((response) => `${response.statusCode} ${response.headers['idempotent-replayed'] ?? 'fresh'}`).join(', '))
  assert.ok(fresh[0].statusCode < 300, fresh[0].body)
  for (const response of all) {
    assert.equal(response.statusCode, fresh[0].statusCode)
    assert.equal(response.body, fresh[0].body, 'the stored answer, byte for byte')
  }
  return fresh[0]
}

test('every keyed write route applies a request once, however often and however concurrently it is sent', async (t) => {
  const fixture = await merchantFixture(t)
  const { db } = fixture
  const merchantId = fixture.merchant.id
  const post = (url: string, payload: unknown) => (key: Record<string, string>) => fixture.call('POST', url, payload, key)
  const count = async (table: 'payments_merchants' | 'payments_transactions' | 'payments_merchant_apps' | 'payments_outbox' | 'payments_webhook_endpoints') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

  const merchantsBefore = await count('payments_merchants')
  await sentFourTimes(post('/merchants', { ...merchantAttributes, email: 'once@example.com' }), 'merchant')
  assert.equal(await count('payments_merchants'), merchantsBefore + 1, 'one merchant')

  const id = await authorize(fixture, merchantId, { amount: 1000, cardRef: 'card-1' })
  const moved = async () => db.selectFrom('payments_transactions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  await sentFourTimes(post(`/transactions/${id}/captures`, { amount: 300 }), 'capture')
  await sentFourTimes(post(`/transactions/${id}/refunds`, { amount: 100 }), 'refund')
  await sentFourTimes(post(`/transactions/${id}/voids`, { amount: 200 }), 'void')
  const row = await moved()
  assert.deepEqual([row.captured_amount, row.refunded_amount, row.voided_amount], [300, 100, 200])
  const lines = await db.selectFrom('payments_lines').select('amount').where('transaction_id', '=', id).execute()
  assert.equal(lines.length, 2, 'one ledger line for the capture, one for the refund')

  const transactionsBefore = await count('payments_transactions')
  await sentFourTimes(post(`/merchants/${merchantId}/transactions`, { transactionId: id, currency: 'EUR', amount: 50 }), 'recurring')
  assert.equal(await count('payments_transactions'), transactionsBefore + 1, 'one recurring charge')

  const mailsBefore = await count('payments_outbox')
  await sentFourTimes(post(`/merchants/${merchantId}/users`, { email: 'clerk@example.com' }), 'invite')
  assert.equal(await count('payments_outbox'), mailsBefore + 1, 'one invitation e-mail, sent after the commit')

  const other = await createApp(fixture.app)
  const appsBefore = await count('payments_merchant_apps')
  await sentFourTimes(post(`/merchants/${merchantId}/apps`, { appId: other.id }), 'add-app')
  assert.equal(await count('payments_merchant_apps'), appsBefore + 1)

  const webhooksBefore = await count('payments_webhook_endpoints')
  const created = await sentFourTimes(post(`/merchants/${merchantId}/webhooks`, { url: 'https://hooks.example.com/triad', events: ['*'] }), 'webhook')
  assert.equal(await count('payments_webhook_endpoints'), webhooksBefore + 1, 'one endpoint, one secret')
  assert.ok(created.json().webhook.secret)
})

test('the writes of a keyed request commit with its stored answer: when the answer cannot be stored, nothing was applied', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  const capture = () => fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 }, { 'idempotency-key': 'atomic' })
  if (testDialect === 'postgres') {
    await sql`create function refuse_answers() returns trigger language plpgsql as $$ begin raise exception 'no answers today'; end $$`.execute(fixture.db)
    await sql`create trigger refuse_answers before insert on payments_idempotency for each row execute function refuse_answers()`.execute(fixture.db)
  } else {
    await sql`create trigger refuse_answers before insert on payments_idempotency begin select raise(abort, 'no answers today'); end`.execute(fixture.db)
  }
  const failed = await capture()
  assert.equal(failed.statusCode, 500, failed.body)
  const untouched = await fixture.db.selectFrom('payments_transactions').select('captured_amount').where('id', '=', id).executeTakeFirstOrThrow()
  assert.equal(untouched.captured_amount, 0, 'the capture was rolled back with its answer')
  assert.equal((await fixture.db.selectFrom('payments_trail').select('id').where('transaction_id', '=', id).execute()).length, 0)
  assert.equal((await fixture.db.selectFrom('payments_events').select('id').where('subject_id', '=', id).where('type', '=', 'transaction.captured').execute()).length, 0, 'no webhook event')

  await sql`drop trigger refuse_answers${sql.raw(testDialect === 'postgres' ? ' on payments_idempotency' : '')}`.execute(fixture.db)
  const resent = await capture()
  assert.equal(resent.statusCode, 201, resent.body)
  assert.equal(resent.headers['idempotent-replayed'], undefined, 'run as new')
  assert.equal(resent.json().transaction.capturedAmount, 100)
})

test('a key an earlier version left "in progress" stands for nothing: the request runs at once', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  await fixture.db
    .insertInto('payments_idempotency')
    .values({ app_id: fixture.owner.id, key: 'orphan', fingerprint: 'x', status: null, content_type: null, body: null, created: fixture.clock.now().toISOString() })
    .execute()
  const first = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1 }, { 'idempotency-key': 'orphan' })
  assert.equal(first.statusCode, 201, first.body)
  const again = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1 }, { 'idempotency-key': 'orphan' })
  assert.equal(again.headers['idempotent-replayed'], 'true')
  assert.equal(again.json().transaction.capturedAmount, 1)
})

test('a 409 or 5xx stores nothing, and POST /apps (public) ignores the key', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  // 409: the key used with another body. The first answer stays; the other body is never run.
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 10 }, { 'idempotency-key': 'k' })).statusCode, 201)
  const other = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 20 }, { 'idempotency-key': 'k' })
  assert.equal(other.statusCode, 409)
  assert.equal(other.json().code, 'conflict')
  assert.equal((await fixture.call('GET', `/transactions/${id}`)).json().transaction.capturedAmount, 10)

  const bad = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 10 }, { 'idempotency-key': 'x'.repeat(256) })
  assert.equal(bad.statusCode, 400)
  assert.match(bad.body, /Idempotency-Key/)

  const key = { 'idempotency-key': 'public' }
  const first = await fixture.app.inject({ method: 'POST', url: '/apps', headers: key, payload: {} })
  const second = await fixture.app.inject({ method: 'POST', url: '/apps', headers: key, payload: {} })
  assert.notEqual(first.json().app.key, second.json().app.key)
})

test('a client that hangs up mid-request loses nothing: its keyed capture still commits with its answer, and the resend gets it', async (t) => {
  const fixture = await merchantFixture(t)
  const id = await authorize(fixture, fixture.merchant.id)
  await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = fixture.app.server.address() as { port: number }
  const body = '{"amount":1}'
  for (let index = 0; index < 10; index++) {
    const socket = connect(port, '127.0.0.1')
    const request =
      `POST /transactions/${id}/captures HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${basic(fixture.owner.key)}\r\ncontent-type: application/json\r\n` +
      `idempotency-key: gone-${index}\r\ncontent-length: ${body.length}\r\n\r\n${body}`
    // Sent whole, then gone at once or a few milliseconds in (while the capture runs).
    await new Promise<void>((resolve) => socket.write(request, () => resolve()))
    await sleep(index % 5)
    socket.destroy()
  }
  const captured = async () => (await fixture.call('GET', `/transactions/${id}`)).json().transaction.capturedAmount as number
  for (let waited = 0; waited < 5000 && (await captured()) < 10; waited += 50) await sleep(50)
  assert.equal(await captured(), 10, 'every request that arrived whole was applied')
  for (let index = 0; index < 10; index++) {
    const resent = await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1 }, { 'idempotency-key': `gone-${index}` })
    assert.equal(resent.statusCode, 201)
    assert.equal(resent.headers['idempotent-replayed'], 'true')
  }
  assert.equal(await captured(), 10, 'and none twice')
  // Nothing was left holding the database: a new request goes through.
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1 }, { 'idempotency-key': 'after' })).statusCode, 201)
})
