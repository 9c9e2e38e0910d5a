import assert from 'node:assert/strict'
import type { IncomingHttpHeaders } from 'node:http'
import { test } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { verifySignature } from '../../../../examples/webhook-receiver.ts'
import { createManualClock, type ManualClock } from '../../../../src/core/clock.ts'
import { createManualScheduler } from '../../../../src/core/scheduler.ts'
import { authorize, merchantFixture, paymentsCli } from '../helpers.ts'
import { type Received, startReceiver } from './receiver.ts'

// Deliveries verified by the verifiers receivers already have: the unmodified `standardwebhooks`
// package and svix's `Webhook`, beside Triad's own `Triad-Signature` check, under one secret and
// through a secret rotation. The verifiers read the time from `Date`; each check runs with
// `Date` mocked to the instant it stands for, so no test waits for a timestamp to age.

async function hooksFixture(t: test.TestContext) {
  const clock = createManualClock()
  const scheduler = createManualScheduler(clock)
  const fixture = await merchantFixture(t, { clock, deps: { scheduler } })
  const deliver = async () => {
    clock.advance(1000)
    await scheduler.runDue()
  }
  return { ...fixture, clock, deliver }
}

const seconds = (clock: ManualClock) => Math.floor(clock.now().getTime() / 1000)

/** The three Standard Webhooks headers of a received request, as the verifiers take them. */
function standardHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  }
}

/** Runs `check` with `Date` (the verifiers' clock) at `unixSeconds`. */
function at<T>(t: test.TestContext, unixSeconds: number, check: () => T): T {
  t.mock.timers.enable({ apis: ['Date'], now: unixSeconds * 1000 })
  try {
    return check()
  } finally {
    t.mock.timers.reset()
  }
}

/** Whether each verifier accepts `item` under `secret` when checked at `unixSeconds`: [standardwebhooks, svix, Triad-Signature]. */
function verdicts(t: test.TestContext, item: Received, secret: string, unixSeconds: number): [boolean, boolean, boolean] {
  const accepts = (verify: () => unknown) => {
    try {
      verify()
      return true
    } catch {
      return false
    }
  }
  return at(t, unixSeconds, () => [
    accepts(() => new StandardWebhook(secret).verify(item.body, standardHeaders(item.headers))),
    accepts(() => new SvixWebhook(secret).verify(item.body, standardHeaders(item.headers))),
    verifySignature(item.headers['triad-signature'] as string | undefined, item.body, secret, { nowSeconds: unixSeconds }).ok,
  ])
}

test('every delivery carries Standard Webhooks headers that standardwebhooks and svix verify with the one secret Triad-Signature takes', async (t) => {
  const fixture = await hooksFixture(t)
  const receiver = await startReceiver(t)
  const registered = await fixture.call('POST', `/merchants/${fixture.merchant.id}/webhooks`, { url: receiver.url, events: ['*'] })
  assert.equal(registered.statusCode, 201, registered.body)
  const { secret } = registered.json().webhook as { secret: string }
  // Standard Webhooks' form: whsec_ and standard base64 of 32 bytes.
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32)

  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  assert.equal((await fixture.call('POST', `/transactions/${id}/captures`, { amount: 300 })).statusCode, 201)
  await fixture.deliver()
  assert.equal(receiver.received.length, 2)

  for (const item of receiver.received) {
    assert.equal(item.headers['webhook-id'], item.event.id, 'the message id is the event id, stable across attempts')
    assert.equal(item.headers['webhook-timestamp'], String(seconds(fixture.clock)))
    assert.match(String(item.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/)
    assert.deepEqual(verdicts(t, item, secret, seconds(fixture.clock)), [true, true, true])
    // standardwebhooks hands back the verified event.
    assert.deepEqual(
      at(t, seconds(fixture.clock), () => new StandardWebhook(secret).verify(item.body, standardHeaders(item.headers))),
      item.event,
    )
  }

  const [first] = receiver.received
  const signedAt = seconds(fixture.clock)
  // Within the verifiers' five minutes, and refused past them (a replay).
  assert.deepEqual(verdicts(t, first, secret, signedAt + 299), [true, true, true])
  assert.deepEqual(verdicts(t, first, secret, signedAt + 301), [false, false, false])
  // A changed body, another secret, another message id: refused.
  const tampered = { ...first, body: first.body.replace('"amount":1000', '"amount":9000') }
  assert.notEqual(tampered.body, first.body)
  assert.deepEqual(verdicts(t, tampered, secret, signedAt), [false, false, false])
  const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  assert.deepEqual(verdicts(t, first, other, signedAt), [false, false, false])
  const renamed = { ...first, headers: { ...first.headers, 'webhook-id': receiver.received[1].event.id } }
  assert.deepEqual(verdicts(t, renamed, secret, signedAt).slice(0, 2), [false, false])
})

test('a rotated secret: for 24 hours both secrets verify every delivery (two signatures per header), then only the new one', async (t) => {
  const fixture = await hooksFixture(t)
  const receiver = await startReceiver(t)
  const merchantUrl = `/merchants/${fixture.merchant.id}`
  const hook = (await fixture.call('POST', `${merchantUrl}/webhooks`, { url: receiver.url, events: ['*'] })).json().webhook as { id: string; secret: string }
  const oldSecret = hook.secret

  const rotated = await fixture.call('POST', `${merchantUrl}/webhooks/${hook.id}/rotate-secret`)
  assert.equal(rotated.statusCode, 201, rotated.body)
  const rotatedHook = rotated.json().webhook
  const newSecret: string = rotatedHook.secret
  assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.notEqual(newSecret, oldSecret)
  const overlapEnds = new Date(fixture.clock.now().getTime() + 24 * 3_600_000).toISOString()
  assert.equal(rotatedHook.previousSecretExpires, overlapEnds)
  const shown = await fixture.call('GET', `${merchantUrl}/webhooks/${hook.id}`)
  assert.equal(shown.json().webhook.previousSecretExpires, overlapEnds)
  assert.ok(!shown.body.includes(newSecret) && !shown.body.includes(oldSecret), 'neither secret is shown again')

  // During the overlap: two signatures, the new secret's first; either secret verifies with every verifier.
  await authorize(fixture, fixture.merchant.id, { amount: 100 })
  await fixture.deliver()
  const during = receiver.received[0]
  const signatures = String(during.headers['webhook-signature']).split(' ')
  assert.equal(signatures.length, 2)
  assert.ok(signatures.every((signature) => /^v1,[A-Za-z0-9+/]{43}=$/.test(signature)))
  assert.match(String(during.headers['triad-signature']), /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
  const duringAt = seconds(fixture.clock)
  assert.deepEqual(verdicts(t, during, newSecret, duringAt), [true, true, true])
  assert.deepEqual(verdicts(t, during, oldSecret, duringAt), [true, true, true])
  assert.equal(at(t, duringAt, () => new StandardWebhook(newSecret).sign(during.event.id, new Date(duringAt * 1000), during.body)), signatures[0])

  // After the overlap: the old secret no longer verifies anything, and the webhook stops naming it.
  fixture.clock.set(new Date(new Date(overlapEnds).getTime() + 1000))
  await authorize(fixture, fixture.merchant.id, { amount: 200 })
  await fixture.deliver()
  const after = receiver.received[1]
  assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1)
  const afterAt = seconds(fixture.clock)
  assert.deepEqual(verdicts(t, after, newSecret, afterAt), [true, true, true])
  assert.deepEqual(verdicts(t, after, oldSecret, afterAt), [false, false, false])
  assert.equal((await fixture.call('GET', `${merchantUrl}/webhooks/${hook.id}`)).json().webhook.previousSecretExpires, undefined)
})

test('rotating a secret refuses an unknown, removed or foreign endpoint and a caller without a key, in the merchant API shape; the operator CLI rotates too', async (t) => {
  const fixture = await hooksFixture(t)
  const merchantUrl = `/merchants/${fixture.merchant.id}`
  const hook = (await fixture.call('POST', `${merchantUrl}/webhooks`, { url: 'https://shop.example/hooks', events: ['*'] })).json().webhook as { id: string; secret: string }

  const unknown = await fixture.call('POST', `${merchantUrl}/webhooks/000000000000000000000000/rotate-secret`)
  assert.equal(unknown.statusCode, 404)
  assert.deepEqual(unknown.json(), { code: 'not_found', message: 'Webhook not found' })
  const liveId = await fixture.liveMerchant()
  const theirs = (await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url: 'https://other.example/hooks', events: ['*'] })).json().webhook
  assert.equal((await fixture.call('POST', `${merchantUrl}/webhooks/${theirs.id}/rotate-secret`)).statusCode, 404, "another merchant's endpoint")
  assert.equal((await fixture.app.inject({ method: 'POST', url: `${merchantUrl}/webhooks/${hook.id}/rotate-secret` })).statusCode, 401)

  const cli = await paymentsCli(fixture, 'webhooks', 'rotate-secret', fixture.merchant.id, hook.id, '--json')
  assert.equal(cli.code, 0, cli.err)
  const fromCli = JSON.parse(cli.out) as { secret: string; previousSecretExpires: string }
  assert.match(fromCli.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.notEqual(fromCli.secret, hook.secret)
  assert.ok(fromCli.previousSecretExpires > fixture.clock.now().toISOString())

  assert.equal((await fixture.call('DELETE', `${merchantUrl}/webhooks/${hook.id}`)).statusCode, 204)
  assert.equal((await fixture.call('POST', `${merchantUrl}/webhooks/${hook.id}/rotate-secret`)).statusCode, 404, 'a removed endpoint')
})
