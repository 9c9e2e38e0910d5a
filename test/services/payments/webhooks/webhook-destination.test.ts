// Webhooks go to public addresses only (server-side request forgery): refused when a URL names a
// private address, and when a name resolves to one at connection time.
import assert from 'node:assert/strict'
import type { LookupAddress } from 'node:dns'
import { test } from 'node:test'
import { fetch } from 'undici'
import { DestinationRefused, guardedDispatcher, type Resolver } from '../../../../src/services/payments/modules/webhooks/webhook-destination.ts'
import { merchantFixture } from '../helpers.ts'
import { startReceiver } from './receiver.ts'

test('registration refuses https URLs at private, loopback, link-local and unspecified addresses, naming the address', async (t) => {
  const fixture = await merchantFixture(t)
  const liveId = await fixture.liveMerchant()
  const refused = ['https://10.0.0.1/hooks', 'https://192.168.1.20/hooks', 'https://169.254.169.254/latest/meta-data', 'https://[fd00::1]/hooks', 'https://[::ffff:10.1.2.3]/hooks', 'https://0.0.0.0/hooks', 'https://127.0.0.1/hooks', 'https://localhost:9/hooks', 'https://[::1]/hooks', 'https://100.64.0.1/hooks']
  for (const url of refused) {
    const response = await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url, events: ['*'] })
    assert.equal(response.statusCode, 400, url)
    const [error] = response.json()
    assert.equal(error.field, 'url', url)
    assert.match(error.message, /private network/, url)
  }
  const linkLocal = (await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url: 'https://169.254.169.254/', events: ['*'] })).json()[0]
  assert.match(linkLocal.message, /169\.254\.169\.254, a linkLocal address/)
  // Public addresses and names are taken (names are checked again at each connection).
  for (const url of ['https://93.184.215.14/hooks', 'https://shop.example/hooks']) {
    assert.equal((await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url, events: ['*'] })).statusCode, 201, url)
  }
  // A test merchant keeps its loopback receiver; private addresses stay refused for it too.
  assert.equal((await fixture.call('POST', `/merchants/${fixture.merchant.id}/webhooks`, { url: 'https://127.0.0.1:9/hooks', events: ['*'] })).statusCode, 201)
  assert.equal((await fixture.call('POST', `/merchants/${fixture.merchant.id}/webhooks`, { url: 'https://10.0.0.1/hooks', events: ['*'] })).statusCode, 400)
})

test('PAYMENTS_WEBHOOK_ALLOW_PRIVATE takes private addresses for any merchant', async (t) => {
  const fixture = await merchantFixture(t, { env: { PAYMENTS_WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const liveId = await fixture.liveMerchant()
  for (const url of ['https://10.0.0.1/hooks', 'https://127.0.0.1/hooks']) {
    assert.equal((await fixture.call('POST', `/merchants/${liveId}/webhooks`, { url, events: ['*'] })).statusCode, 201, url)
  }
})

/** A resolver answering every name with the given addresses. */
const resolvingTo =
  (...addresses: string[]): Resolver =>
  (_hostname, _options, callback) =>
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    )

test('at connection time a name resolving to a private or loopback address is not connected to', async (t) => {
  const receiver = await startReceiver(t)
  const port = new URL(receiver.url).port
  const post = (dispatcher: ReturnType<typeof guardedDispatcher>, host: string) =>
    fetch(`http://${host}:${port}/hooks`, { method: 'POST', body: '{}', dispatcher, redirect: 'manual' })

  // shop.example "rebinds" to the loopback receiver: refused before any byte is sent.
  const guarded = guardedDispatcher({ allowPrivate: false }, resolvingTo('127.0.0.1'))
  t.after(() => guarded.close())
  const error = await post(guarded, 'shop.example').then(
    () => assert.fail('connected'),
    (failure: Error) => failure,
  )
  assert.ok((error.cause as Error) instanceof DestinationRefused, String(error.cause))
  assert.match((error.cause as Error).message, /shop\.example resolves to 127\.0\.0\.1, a loopback address/)
  // One private address among public ones is enough to refuse (a resolver could pick either).
  const mixed = guardedDispatcher({ allowPrivate: false }, resolvingTo('93.184.215.14', '10.0.0.7'))
  t.after(() => mixed.close())
  await assert.rejects(post(mixed, 'shop.example'), (failure: Error) => (failure.cause as Error) instanceof DestinationRefused)
  assert.equal(receiver.received.length, 0, 'nothing reached the receiver')

  // A URL naming localhost itself (only registrable for test merchants) may land on loopback.
  const response = await post(guarded, 'localhost')
  assert.equal(response.status, 200)
  // With PAYMENTS_WEBHOOK_ALLOW_PRIVATE the rebinding name goes through.
  const open = guardedDispatcher({ allowPrivate: true }, resolvingTo('127.0.0.1'))
  t.after(() => open.close())
  assert.equal((await post(open, 'shop.example')).status, 200)
  assert.equal(receiver.received.length, 2)
})
