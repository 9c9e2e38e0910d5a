import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { verifySignature } from '../../../../examples/webhook-receiver.ts'
import { createManualClock, type ManualClock } from '../../../../src/core/clock.ts'
import { createManualScheduler } from '../../../../src/core/scheduler.ts'
import { testDialect } from '../../../helpers/build-app.ts'
import type { paths } from '../../../../clients/typescript/index.ts'
import { typedClient } from '../../../helpers/typed-client.ts'
import { authorize, basic, createApp, merchantFixture, parseList, paymentsApp, paymentsCli } from '../helpers.ts'
import { startReceiver } from './receiver.ts'

type Fixture = Awaited<ReturnType<typeof hooksFixture>>

/** A merchant fixture whose webhook worker runs only when the test says so (`deliver`). */
async function hooksFixture(t: test.TestContext, options: { env?: Record<string, string>; clock?: ManualClock } = {}) {
  const clock = options.clock ?? createManualClock()
  const scheduler = createManualScheduler(clock)
  const fixture = await merchantFixture(t, { env: options.env, clock, deps: { scheduler } })
  /** Lets a poll interval pass and runs what is due: every delivery due is sent and recorded. */
  const deliver = async () => {
    clock.advance(1000)
    await scheduler.runDue()
  }
  // The webhook and event routes are called through the typed client (clients/typescript).
  const api = typedClient(fixture.app, fixture.headers)
  const merchantId = fixture.merchant.id
  const webhook = (webhookId: string) => ({ params: { path: { merchantId, webhookId } } })
  const event = (eventId: string) => ({ params: { path: { merchantId, eventId } } })
  return { ...fixture, scheduler, deliver, api, webhook, event }
}

type Subscription = NonNullable<paths['/merchants/{merchantId}/webhooks']['post']['requestBody']>['content']['application/json']['events']

async function register(fixture: Fixture, url: string, events: Subscription = ['*']): Promise<{ id: string; secret: string; status: string }> {
  const { data, response } = await fixture.api.POST('/merchants/{merchantId}/webhooks', { params: { path: { merchantId: fixture.merchant.id } }, body: { url, events } })
  assert.equal(response.status, 201)
  assert.ok(data)
  return data.webhook
}

type EventsQuery = { before?: string; after?: string; 'filter[type]'?: string; 'filter[transactionId]'?: string }

async function events(fixture: Fixture, query: EventsQuery = {}) {
  const { data, response } = await fixture.api.GET('/merchants/{merchantId}/events', { params: { path: { merchantId: fixture.merchant.id }, query: { limit: 100, ...query } } })
  assert.equal(response.status, 200)
  assert.ok(data)
  return data
}

async function webhookOf(fixture: Fixture, webhookId: string) {
  const { data } = await fixture.api.GET('/merchants/{merchantId}/webhooks/{webhookId}', fixture.webhook(webhookId))
  assert.ok(data)
  return data.webhook
}

const nowSeconds = (clock: ManualClock) => Math.floor(clock.now().getTime() / 1000)

test('the events of a transaction reach the endpoint in order, signed, carrying the transaction as the API returns it', async (t) => {
  const fixture = await hooksFixture(t)
  const receiver = await startReceiver(t, { delayMs: 20 })
  const hook = await register(fixture, receiver.url)
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)

  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  for (const [kind, amount] of [['captures', 300], ['captures', 200], ['refunds', 100], ['voids', 500]] as const) {
    assert.equal((await fixture.call('POST', `/transactions/${id}/${kind}`, { amount })).statusCode, 201)
  }
  await fixture.deliver()
  assert.deepEqual(receiver.types(), ['transaction.authorized', 'transaction.captured', 'transaction.captured', 'transaction.refunded', 'transaction.voided'])
  assert.deepEqual(
    receiver.received.map((item) => item.event.data.capturedAmount),
    [0, 300, 500, 500, 500],
  )
  // One at a time: each event was sent only after the one before it was answered.
  for (let index = 1; index < receiver.received.length; index++) {
    assert.ok(receiver.received[index].arrived >= (receiver.received[index - 1].answered ?? Infinity), `event ${index} was sent before ${index - 1} was answered`)
  }
  const final = (await fixture.call('GET', `/transactions/${id}`)).json().transaction
  assert.deepEqual(receiver.received.at(-1)?.event.data, final)

  for (const item of receiver.received) {
    // A capture, refund or void names who made it (here the owner's app, by its key); a payment names nobody.
    if (item.event.type === 'transaction.authorized') assert.deepEqual(Object.keys(item.event), ['id', 'type', 'created', 'data'])
    else {
      assert.deepEqual(Object.keys(item.event), ['id', 'type', 'created', 'data', 'actor'])
      assert.deepEqual(item.event.actor, { type: 'app', id: fixture.owner.id })
    }
    assert.equal(item.headers['content-type'], 'application/json')
    assert.equal(item.headers['triad-event-id'], item.event.id)
    const header = String(item.headers['triad-signature'])
    const [, stamp, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? []
    assert.equal(Number(stamp), nowSeconds(fixture.clock))
    assert.equal(mac, createHmac('sha256', hook.secret).update(`${stamp}.${item.body}`).digest('hex'))
    assert.deepEqual(verifySignature(header, item.body, hook.secret, { nowSeconds: nowSeconds(fixture.clock) }), { ok: true })
  }

  // The receiver example refuses a replay past its tolerance, a changed body and another secret.
  const first = receiver.received[0]
  const header = String(first.headers['triad-signature'])
  assert.equal(verifySignature(header, first.body, hook.secret, { nowSeconds: nowSeconds(fixture.clock) + 301 }).ok, false)
  assert.equal(verifySignature(header, first.body, hook.secret, { nowSeconds: nowSeconds(fixture.clock) + 299 }).ok, true)
  assert.equal(verifySignature(header, first.body.replace('"amount":1000', '"amount":9000'), hook.secret, { nowSeconds: nowSeconds(fixture.clock) }).ok, false)
  assert.equal(verifySignature(header, first.body, 'whsec_another', { nowSeconds: nowSeconds(fixture.clock) }).ok, false)
  assert.equal(verifySignature(undefined, first.body, hook.secret).ok, false)

  // Delivered once: more rounds send nothing again; the list shows one successful attempt each.
  await fixture.deliver()
  await fixture.deliver()
  assert.equal(receiver.received.length, 5)
  const listed = await events(fixture)
  assert.deepEqual(
    listed.map((event) => event.type),
    ['transaction.voided', 'transaction.refunded', 'transaction.captured', 'transaction.captured', 'transaction.authorized'],
  )
  for (const event of listed) {
    assert.equal(event.deliveries.length, 1)
    const [delivery] = event.deliveries
    assert.equal(delivery.webhookId, hook.id)
    assert.equal(delivery.status, 'delivered')
    assert.equal(delivery.attempts.length, 1)
    assert.equal(delivery.attempts[0].status, 'succeeded')
    assert.equal(delivery.attempts[0].responseCode, 200)
    assert.ok(Number.isInteger(delivery.attempts[0].latency) && delivery.attempts[0].latency >= 0)
  }
  assert.deepEqual(listed.map((event) => event.id).reverse(), receiver.received.map((item) => item.event.id))

  // The secret is stored sealed, never in clear, and never shown again.
  const stored = await fixture.db.selectFrom('payments_webhook_endpoints').select('secret_sealed').where('id', '=', hook.id).executeTakeFirstOrThrow()
  assert.match(stored.secret_sealed, /^v2\.[0-9a-f]{16}\./)
  assert.ok(!stored.secret_sealed.includes(hook.secret.slice(6)))
  const shown = await fixture.api.GET('/merchants/{merchantId}/webhooks/{webhookId}', fixture.webhook(hook.id))
  assert.equal(shown.response.status, 200)
  assert.equal((shown.data?.webhook as Record<string, unknown>).secret, undefined)
  assert.ok(!JSON.stringify(shown.data).includes(hook.secret))
})

test('a failing delivery is retried with growing, jittered waits after 500s and timeouts, and later events of the transaction wait for it', async (t) => {
  const fixture = await hooksFixture(t, { env: { PAYMENTS_WEBHOOK_TIMEOUT: '300ms' } })
  const receiver = await startReceiver(t)
  await register(fixture, receiver.url)
  receiver.answer(500, 'hang', 503)

  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 201)

  const authorizedDelivery = async () => (await events(fixture, { 'filter[type]': 'transaction.authorized' }))[0].deliveries[0]
  const waitAfter = async (from: number, min: number, max: number) => {
    const delivery = await authorizedDelivery()
    assert.equal(delivery.status, 'pending')
    const wait = Date.parse(String(delivery.nextAttempt)) - from
    assert.ok(wait >= min && wait <= max, `next attempt in ${wait} ms, expected ${min}–${max}`)
    return wait
  }

  await fixture.deliver()
  assert.deepEqual(receiver.types(), ['transaction.authorized'], 'the capture waits behind the failing authorization')
  let wait = await waitAfter(fixture.clock.now().getTime(), 30_000, 60_000)

  fixture.clock.advance(wait)
  await fixture.deliver()
  assert.deepEqual(receiver.types(), ['transaction.authorized', 'transaction.authorized'])
  let delivery = await authorizedDelivery()
  assert.equal(delivery.attempts[1].status, 'failed')
  assert.equal(delivery.attempts[1].responseCode, undefined)
  assert.match(String(delivery.attempts[1].error), /no answer within 300 ms/)
  assert.ok(delivery.attempts[1].latency >= 250)
  wait = await waitAfter(fixture.clock.now().getTime(), 60_000, 120_000)

  // Not due yet: nothing is sent before the wait is over.
  fixture.clock.advance(wait - 2000)
  await fixture.deliver()
  assert.equal(receiver.received.length, 2)
  fixture.clock.advance(1000)
  await fixture.deliver()
  assert.equal(receiver.received.length, 3)
  wait = await waitAfter(fixture.clock.now().getTime(), 120_000, 240_000)

  fixture.clock.advance(wait)
  await fixture.deliver()
  assert.deepEqual(receiver.types(), ['transaction.authorized', 'transaction.authorized', 'transaction.authorized', 'transaction.authorized', 'transaction.captured'])
  assert.equal(new Set(receiver.received.slice(0, 4).map((item) => item.event.id)).size, 1, 'every attempt carries the same event id')
  assert.equal(new Set(receiver.received.slice(0, 4).map((item) => item.body)).size, 1, 'and the same body')
  delivery = await authorizedDelivery()
  assert.equal(delivery.status, 'delivered')
  assert.deepEqual(
    delivery.attempts.map((attempt: { status: string; responseCode?: number }) => [attempt.status, attempt.responseCode]),
    [['failed', 500], ['failed', undefined], ['failed', 503], ['succeeded', 200]],
  )
  assert.equal(delivery.lastError, undefined)
  const hooks = (await fixture.api.GET('/merchants/{merchantId}/webhooks', { params: { path: { merchantId: fixture.merchant.id }, query: { limit: 10 } } })).data ?? []
  assert.equal(hooks[0].failingSince, undefined, 'a success ends the failure streak')
})

test('no event is recorded for a capture that rolled back, and a capture cannot commit without its event', async (t) => {
  const fixture = await hooksFixture(t)
  const receiver = await startReceiver(t)
  await register(fixture, receiver.url)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })

  // Refused by the amount rule: nothing changes, nothing is reported.
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 5000 })).statusCode, 400)

  // The database refuses the capture's ledger line: the whole capture rolls back, its event with it.
  if (testDialect === 'sqlite') {
    await sql`create trigger refuse_lines before insert on payments_lines begin select raise(abort, 'refused by the test'); end`.execute(fixture.db)
  } else {
    await sql`create function refuse_lines() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`.execute(fixture.db)
    await sql`create trigger refuse_lines before insert on payments_lines for each row execute function refuse_lines()`.execute(fixture.db)
  }
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 500)
  await sql`drop trigger refuse_lines${sql.raw(testDialect === 'sqlite' ? '' : ' on payments_lines')}`.execute(fixture.db)

  // The event insert itself fails: the capture (line, trail, counters) rolls back with it.
  if (testDialect === 'sqlite') {
    await sql`create trigger refuse_events before insert on payments_events when new.type = 'transaction.captured' begin select raise(abort, 'refused by the test'); end`.execute(fixture.db)
  } else {
    await sql`create function refuse_events() returns trigger language plpgsql as $$ begin if new.type = 'transaction.captured' then raise exception 'refused by the test'; end if; return new; end $$`.execute(fixture.db)
    await sql`create trigger refuse_events before insert on payments_events for each row execute function refuse_events()`.execute(fixture.db)
  }
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 500)
  const transaction = (await fixture.call('GET', `/transactions/${id}`)).json().transaction
  assert.equal(transaction.capturedAmount, 0)
  assert.deepEqual(transaction.trail, [])
  assert.equal((await fixture.call('GET', `/merchants/${fixture.merchant.id}/lines?limit=10`)).body, '[\n]')

  await fixture.deliver()
  assert.deepEqual(receiver.types(), ['transaction.authorized'])
  assert.deepEqual(
    (await events(fixture)).map((event) => event.type),
    ['transaction.authorized'],
  )
})

test('two instances on one database send each event once, in order per transaction', async (t) => {
  const fixture = await hooksFixture(t)
  const second = createManualScheduler(fixture.clock)
  const other = await paymentsApp(t, { database: fixture.database, clock: fixture.clock, deps: { scheduler: second } })
  await other.app.ready()
  const receiver = await startReceiver(t, { delayMs: 15 })
  await register(fixture, receiver.url)

  const ids: string[] = []
  for (let index = 0; index < 12; index++) ids.push(await authorize(fixture, fixture.merchant.id, { amount: 1000 }))
  const otherCall = (url: string, payload: unknown) =>
    other.app.inject({ method: 'POST', url, headers: fixture.headers, payload: payload as Record<string, unknown> })
  for (const id of ids) {
    assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 201)
    assert.equal((await otherCall(`/transactions/${id}/refunds`, { amount: 50 })).statusCode, 201)
  }
  for (let round = 0; round < 4; round++) {
    fixture.clock.advance(1000)
    await Promise.all([fixture.scheduler.runDue(), second.runDue()])
  }
  const expected = ids.length * 3
  assert.equal(receiver.received.length, expected, `each of ${expected} events once`)
  assert.equal(new Set(receiver.received.map((item) => item.event.id)).size, expected)
  for (const id of ids) {
    assert.deepEqual(
      receiver.received.filter((item) => item.event.data.id === id).map((item) => item.event.type),
      ['transaction.authorized', 'transaction.captured', 'transaction.refunded'],
    )
  }
  const attempts = await fixture.db.selectFrom('payments_delivery_attempts').select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow()
  assert.equal(Number(attempts.count), expected)
})

test('an event committed by an instance that died before sending is sent by another; a delivery stuck in flight is taken over once its lease ends', async (t) => {
  const fixture = await hooksFixture(t, { env: { PAYMENTS_WEBHOOK_TIMEOUT: '30s' } })
  const receiver = await startReceiver(t)
  await register(fixture, receiver.url)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  // The first instance committed the authorization and the capture, and never ran its worker.
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 201)

  const secondScheduler = createManualScheduler(fixture.clock)
  const second = await paymentsApp(t, { database: fixture.database, clock: fixture.clock, deps: { scheduler: secondScheduler }, env: { PAYMENTS_WEBHOOK_TIMEOUT: '30s' } })
  await second.app.ready()
  fixture.clock.advance(1000)
  await secondScheduler.runDue()
  assert.deepEqual(receiver.types(), ['transaction.authorized', 'transaction.captured'])

  // Now the first instance sends a refund's event and its request hangs (as if the process froze).
  assert.equal((await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 10 })).statusCode, 201)
  receiver.answer('hang')
  fixture.clock.advance(1000)
  const stuck = fixture.scheduler.runDue()
  await receiver.waitFor(3)
  // Within the lease, the other instance leaves it alone.
  fixture.clock.advance(20_000)
  await secondScheduler.runDue()
  assert.equal(receiver.received.length, 3)
  // Past the lease (twice the timeout + 5 s), it sends the same event again.
  fixture.clock.advance(50_000)
  await secondScheduler.runDue()
  assert.equal(receiver.received.length, 4)
  assert.equal(receiver.received[3].event.id, receiver.received[2].event.id)
  // The frozen request finally gets its answer: its late result does not undo the delivery.
  receiver.release(200)
  await stuck
  const [refunded] = await events(fixture, { 'filter[type]': 'transaction.refunded' })
  assert.equal(refunded.deliveries[0].status, 'delivered')
  assert.equal(refunded.deliveries[0].attempts.length, 2)
})

test('an endpoint that keeps failing for the retry window is disabled, with the reason shown; enabled again, a resend reaches it', async (t) => {
  const fixture = await hooksFixture(t, { env: { PAYMENTS_WEBHOOK_RETRY_WINDOW: '30m' } })
  const receiver = await startReceiver(t)
  receiver.always(500)
  const hook = await register(fixture, receiver.url, ['transaction.captured', 'transaction.refunded'])
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 201)
  assert.equal((await fixture.call('POST', `/transactions/${id}/refunds`, { amount: 10 })).statusCode, 201)
  for (let minute = 0; minute < 40; minute++) {
    fixture.clock.advance(60_000)
    await fixture.deliver()
  }
  // The refund waited behind the capture; when the capture was given up, the endpoint was disabled.
  assert.ok(receiver.types().length >= 4)
  assert.ok(receiver.types().every((type) => type === 'transaction.captured'))
  const [captured] = await events(fixture, { 'filter[type]': 'transaction.captured' })
  assert.equal(captured.deliveries[0].status, 'failed')
  assert.ok(captured.deliveries[0].attempts.length >= 4)
  const [refunded] = await events(fixture, { 'filter[type]': 'transaction.refunded' })
  assert.equal(refunded.deliveries[0].status, 'failed')
  assert.match(String(refunded.deliveries[0].lastError), /^the endpoint was disabled: every delivery since .* failed \(last: HTTP 500\)$/)
  const shown = await webhookOf(fixture, hook.id)
  assert.equal(shown.status, 'disabled')
  assert.match(String(shown.disabledReason), /failed \(last: HTTP 500\)/)
  assert.ok(shown.disabled)
  const sentBefore = receiver.received.length
  // While disabled, new events are recorded with no delivery to it.
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 100 })).statusCode, 201)
  assert.deepEqual((await events(fixture))[0].deliveries, [])

  // Disabled: resending to it is refused; nothing more is sent.
  const refused = await fixture.api.POST('/merchants/{merchantId}/events/{eventId}/resend', { ...fixture.event(captured.id), body: { webhookId: hook.id } })
  assert.equal(refused.response.status, 409)
  assert.equal((await fixture.api.POST('/merchants/{merchantId}/events/{eventId}/resend', { ...fixture.event(captured.id), body: {} })).response.status, 409)

  receiver.always(200)
  const enabled = await fixture.api.POST('/merchants/{merchantId}/webhooks/{webhookId}/enable', fixture.webhook(hook.id))
  assert.equal(enabled.response.status, 201)
  assert.equal(enabled.data?.webhook.status, 'enabled')
  assert.equal(enabled.data?.webhook.disabledReason, undefined)
  const resent = await fixture.api.POST('/merchants/{merchantId}/events/{eventId}/resend', { ...fixture.event(captured.id), body: {} })
  assert.equal(resent.response.status, 201)
  assert.equal(resent.data?.event.deliveries.length, 2)
  await fixture.deliver()
  assert.equal(receiver.received.length, sentBefore + 1)
  assert.equal(receiver.received.at(-1)?.event.id, captured.id)
})

test('events list: newest first with cursors, filters, every delivery attempt; resend names an endpoint or all', async (t) => {
  const fixture = await hooksFixture(t)
  const receiver = await startReceiver(t)
  const all = await register(fixture, receiver.url)
  const capturesOnly = await register(fixture, `${receiver.url}?only=captures`, ['transaction.captured'])
  const first = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  const second = await authorize(fixture, fixture.merchant.id, { amount: 2000 })
  assert.equal((await fixture.call('POST', `/transactions/${first}/captures`, { amount: 100 })).statusCode, 201)
  await fixture.deliver()
  assert.equal(receiver.received.length, 4)

  const listed = await events(fixture)
  assert.deepEqual(listed.map((event) => event.type), ['transaction.captured', 'transaction.authorized', 'transaction.authorized'])
  assert.deepEqual(listed[0].deliveries.map((delivery: { webhookId: string }) => delivery.webhookId).sort(), [all.id, capturesOnly.id].sort())
  const page = await events(fixture, { before: listed[0].id })
  assert.deepEqual(page.map((event) => event.id), [listed[1].id, listed[2].id])
  const limited = await fixture.api.GET('/merchants/{merchantId}/events', { params: { path: { merchantId: fixture.merchant.id }, query: { limit: 1, after: listed[2].id } } })
  assert.deepEqual(limited.data?.map((event) => event.id), [listed[1].id])
  assert.deepEqual((await events(fixture, { 'filter[transactionId]': second })).map((event) => (event.data as { id: string }).id), [second])
  assert.deepEqual((await events(fixture, { 'filter[type]': 'transaction.captured' })).map((event) => event.id), [listed[0].id])
  const one = await fixture.api.GET('/merchants/{merchantId}/events/{eventId}', fixture.event(listed[0].id))
  assert.equal(one.response.status, 200)
  assert.deepEqual(one.data?.event, listed[0])

  const resent = await fixture.api.POST('/merchants/{merchantId}/events/{eventId}/resend', { ...fixture.event(listed[0].id), body: { webhookId: capturesOnly.id } })
  assert.equal(resent.response.status, 201)
  assert.equal(resent.data?.event.deliveries.length, 3)
  await fixture.deliver()
  assert.equal(receiver.received.length, 5)
  assert.equal(receiver.received[4].event.id, listed[0].id)
  assert.match(String(receiver.received[4].headers['triad-signature']), /^t=\d+,v1=/)
  // An authorization goes to the endpoint that takes every type, not to the captures-only one.
  // With no body at all (the typed client always sends one): the same as {}.
  const resentAll = await fixture.call('POST', `/merchants/${fixture.merchant.id}/events/${listed[2].id}/resend`)
  assert.equal(resentAll.statusCode, 201)
  assert.deepEqual(
    resentAll.json().event.deliveries.map((delivery: { webhookId: string }) => delivery.webhookId),
    [all.id, all.id],
  )
})

test('disputes, fraud alerts and declined recurring charges are events too', async (t) => {
  const fixture = await hooksFixture(t)
  const receiver = await startReceiver(t)
  await register(fixture, receiver.url)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  await fixture.call('POST', `/transactions/${id}/captures`, { amount: 1000 })
  const cli = async (...argv: string[]) => {
    const result = await paymentsCli(fixture, ...argv)
    assert.equal(result.code, 0, result.err)
    return result.out.trim()
  }
  const disputeId = await cli('dispute', 'open', id, '--amount', '400')
  await cli('dispute', 'decide', disputeId, '--lost')
  const other = await cli('dispute', 'open', id, '--amount', '100')
  await cli('dispute', 'decide', other, '--won')
  const fraudId = await cli('fraud', 'report', id, '--reason', '6')

  const expired = await authorize(fixture, fixture.merchant.id, { amount: 500, expiry: { year: 2025, month: 1 } })
  const declined = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, { transactionId: expired, currency: 'EUR', amount: 500 })
  assert.equal(declined.statusCode, 400)

  await fixture.deliver()
  // In order per transaction (the disputes and the fraud alert are about the first one).
  const about = (transactionId: string) =>
    receiver.received.filter((item) => (item.event.data.transactionId ?? item.event.data.id) === transactionId).map((item) => item.event.type)
  assert.deepEqual(about(id), ['transaction.authorized', 'transaction.captured', 'dispute.opened', 'dispute.lost', 'dispute.opened', 'dispute.won', 'fraud_alert.raised'])
  assert.deepEqual(about(expired), ['transaction.authorized'])
  const charge = receiver.received.find((item) => item.event.type === 'transaction.declined')?.event.data.id as string
  assert.deepEqual(about(charge), ['transaction.declined', 'recurring.charge_failed'])
  assert.equal(receiver.received.length, 10)
  const byType = (type: string) => receiver.received.filter((item) => item.event.type === type).map((item) => item.event.data)
  assert.deepEqual(byType('dispute.lost')[0], (await fixture.call('GET', `/disputes/${disputeId}`)).json().dispute)
  assert.deepEqual(byType('fraud_alert.raised')[0], (await fixture.call('GET', `/frauds/${fraudId}`)).json().fraud)
  const [failed] = byType('recurring.charge_failed')
  assert.equal(failed.successful, false)
  assert.equal(failed.recurring, true)
  assert.equal((failed.error as { code: number }).code, 6)
  assert.deepEqual(byType('transaction.declined')[0], failed)
})

test('webhook routes refuse bad input, unknown ids, missing keys and other apps', async (t) => {
  const fixture = await hooksFixture(t)
  const merchantUrl = `/merchants/${fixture.merchant.id}`
  const post = (payload: unknown) => fixture.call('POST', `${merchantUrl}/webhooks`, payload)
  const fieldOf = async (payload: unknown) => {
    const response = await post(payload)
    assert.equal(response.statusCode, 400, response.body)
    return response.json()[0].field
  }
  assert.equal(await fieldOf({ events: ['*'] }), 'url')
  assert.equal(await fieldOf({ url: 'https://shop.example/hooks' }), 'events')
  assert.equal(await fieldOf({ url: 'https://shop.example/hooks', events: [] }), 'events')
  assert.equal(await fieldOf({ url: 'https://shop.example/hooks', events: ['transaction.exploded'] }), 'events.0')
  for (const url of ['not a url', 'ftp://shop.example/hooks', 'http://shop.example/hooks', 'https://user:pw@shop.example/hooks', 'https://shop.example/hooks#x', 'http://10.0.0.1/hooks']) {
    const response = await post({ url, events: ['*'] })
    assert.equal(response.statusCode, 400, url)
    assert.equal(response.json()[0].field, 'url', url)
  }
  assert.equal((await post({ url: 'http://[::1]:9/hooks', events: ['*'] })).statusCode, 201, 'loopback http for a test merchant')
  assert.equal((await post({ url: 'http://localhost:9/hooks', events: ['*'] })).statusCode, 201)

  // A live merchant needs https, loopback or not.
  const liveId = await fixture.liveMerchant()
  assert.equal((await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url: 'http://127.0.0.1:9/hooks', events: ['*'] })).statusCode, 400)
  assert.equal((await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url: 'https://shop.example/hooks', events: ['*'] })).statusCode, 201)

  // Authentication and membership, as every /merchants route.
  const anonymous = await fixture.app.inject({ method: 'GET', url: `${merchantUrl}/webhooks?limit=10` })
  assert.equal(anonymous.statusCode, 401)
  const stranger = await createApp(fixture.app, 'Stranger')
  const foreign = { authorization: basic(stranger.key) }
  for (const [method, url] of [
    ['GET', `${merchantUrl}/webhooks?limit=10`],
    ['POST', `${merchantUrl}/webhooks`],
    ['GET', `${merchantUrl}/events?limit=10`],
  ] as const) {
    const response = await fixture.app.inject({ method, url, headers: foreign, payload: method === 'POST' ? { url: 'https://shop.example/h', events: ['*'] } : undefined })
    assert.equal(response.statusCode, 403, `${method} ${url}`)
  }
  assert.equal((await fixture.call('GET', '/merchants/000000000000000000000000/webhooks?limit=10')).statusCode, 404)
  assert.equal((await fixture.call('GET', '/merchants/000000000000000000000000/events?limit=10')).statusCode, 404)
  assert.equal((await fixture.call('GET', `${merchantUrl}/webhooks`)).statusCode, 400, 'limit is required')
  assert.equal((await fixture.call('GET', `${merchantUrl}/events`)).statusCode, 400, 'limit is required')

  // Unknown or another merchant's endpoint and event: 404.
  const mine = (await post({ url: 'https://shop.example/hooks', events: ['transaction.captured'], description: 'orders' })).json().webhook
  assert.equal(mine.description, 'orders')
  const theirs = (await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url: 'https://other.example/hooks', events: ['*'] })).json().webhook
  assert.equal((await fixture.call('DELETE', `${merchantUrl}/webhooks/${theirs.id}`)).statusCode, 404)
  assert.equal((await fixture.call('GET', `${merchantUrl}/webhooks/000000000000000000000000`)).statusCode, 404)
  assert.equal((await fixture.call('POST', `${merchantUrl}/webhooks/000000000000000000000000/enable`)).statusCode, 404)
  assert.equal((await fixture.call('POST', `${merchantUrl}/events/000000000000000000000000/resend`, {})).statusCode, 404)
  assert.equal((await fixture.call('GET', `${merchantUrl}/events/000000000000000000000000`)).statusCode, 404)
  const id = await authorize(fixture, liveId, { amount: 100 })
  const [liveEvent] = parseList(await fixture.call('GET', `/merchants/${liveId}/events?limit=1`))
  assert.equal(liveEvent.type, 'transaction.authorized')
  assert.equal((liveEvent.data as { id: string }).id, id)
  assert.equal((await fixture.call('POST', `${merchantUrl}/events/${liveEvent.id}/resend`, {})).statusCode, 404, "another merchant's event")
  const [myEvent] = parseList(await fixture.call('GET', `${merchantUrl}/events?limit=1`))
  assert.equal(myEvent, undefined)
  assert.equal((await fixture.call('POST', `/merchants/${liveId}/events/${liveEvent.id}/resend`, { webhookId: mine.id })).statusCode, 404, "another merchant's endpoint")
  assert.equal((await fixture.call('POST', `/merchants/${liveId}/events/${liveEvent.id}/resend`, { webhookId: '' })).statusCode, 400)

  // Remove: 204, then gone from the list and a second removal is 404.
  const listedBefore = parseList(await fixture.call('GET', `${merchantUrl}/webhooks?limit=10`))
  assert.equal(listedBefore.length, 3)
  assert.ok(listedBefore.every((hook) => hook.secret === undefined))
  assert.equal((await fixture.call('DELETE', `${merchantUrl}/webhooks/${mine.id}`)).statusCode, 204)
  assert.equal((await fixture.call('DELETE', `${merchantUrl}/webhooks/${mine.id}`)).statusCode, 404)
  assert.equal((await fixture.call('GET', `${merchantUrl}/webhooks/${mine.id}`)).statusCode, 404)
  assert.equal(parseList(await fixture.call('GET', `${merchantUrl}/webhooks?limit=10`)).length, 2)
})

test('PAYMENTS_WEBHOOK_ALLOW_HTTP accepts http anywhere; removing an endpoint cancels what waits for it', async (t) => {
  const fixture = await hooksFixture(t, { env: { PAYMENTS_WEBHOOK_ALLOW_HTTP: 'true' } })
  const hook = await register(fixture, 'http://shop.internal/hooks')
  await authorize(fixture, fixture.merchant.id, { amount: 100 })
  assert.equal((await fixture.call('DELETE', `/merchants/${fixture.merchant.id}/webhooks/${hook.id}`)).statusCode, 204)
  const [event] = await events(fixture)
  assert.equal(event.deliveries[0].status, 'cancelled')
  assert.equal(event.deliveries[0].lastError, 'the endpoint was removed')
})

test('triad payments webhooks add | list | remove', async (t) => {
  const fixture = await hooksFixture(t)
  const run = (...argv: string[]) => paymentsCli(fixture, 'webhooks', ...argv)
  const added = await run('add', fixture.merchant.id, '--url', 'https://shop.example/hooks', '--events', 'transaction.captured,dispute.opened', '--json')
  assert.equal(added.code, 0, added.err)
  const webhook = JSON.parse(added.out)
  assert.match(webhook.secret, /^whsec_/)
  assert.deepEqual(webhook.events, ['transaction.captured', 'dispute.opened'])
  const plain = await run('add', fixture.merchant.id, '--url', 'https://shop.example/all', '--events', '*')
  assert.equal(plain.code, 0, plain.err)
  assert.match(plain.out, /^[0-9a-f]{24}\nsecret: whsec_/)

  const listed = await run('list', fixture.merchant.id)
  assert.equal(listed.code, 0, listed.err)
  assert.match(listed.out, new RegExp(`${webhook.id}  enabled   https://shop.example/hooks  transaction.captured,dispute.opened`))
  assert.ok(!listed.out.includes('whsec_'))
  // What the CLI registered, the API shows (and the secret opens for signing: same keys).
  assert.equal(parseList(await fixture.call('GET', `/merchants/${fixture.merchant.id}/webhooks?limit=10`)).length, 2)

  assert.equal((await run('remove', fixture.merchant.id, webhook.id)).code, 0)
  assert.equal((await run('list', fixture.merchant.id, '--json')).out.includes(webhook.id), false)
  const missing = await run('remove', fixture.merchant.id, webhook.id)
  assert.equal(missing.code, 1)
  assert.match(missing.err, /Webhook not found/)
  assert.equal((await run('add', fixture.merchant.id, '--url', 'http://shop.example/x', '--events', '*')).code, 1)
  assert.equal((await run('add', fixture.merchant.id, '--url', 'https://shop.example/x', '--events', 'nope')).code, 2)
  assert.equal((await run('add', fixture.merchant.id, '--events', '*')).code, 2)
  const unknown = await run('list', '000000000000000000000000')
  assert.equal(unknown.code, 1)
  assert.match(unknown.err, /no merchant/)
})
