import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clientFixture, clientJson, expectClientError, pay, paymentBody, runPayment, VERSION } from './helpers.ts'

/** The same value with every object's keys in reverse order (as an SDK in another language may send it). */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .reverse()
        .map((key) => [key, reordered((value as Record<string, unknown>)[key])]),
    )
  }
  return value
}

describe('client API edges', () => {
  it('binds hints to the payment’s content: the same fields in another order (or a bare token) keep their proofs', async (t) => {
    const fixture = await clientFixture(t)
    // A challenged payment, so that no step authorizes (and spends the tokens) along the way.
    const body = await paymentBody(fixture.app, fixture.key, { test: {}, custom: { orderId: 7, lines: [{ sku: 'a', qty: 1 }] } })
    const frame = clientJson<{ hints: string[] }>(await pay(fixture.app, body, '/payments/challenges/tds-fingerprint'))
    const other = reordered(body) as Record<string, unknown>
    assert.notEqual(JSON.stringify(other), JSON.stringify(body), 'the bytes differ')
    const card = other.card as { number: { token: string }; code: { token: string } }
    const bare = { ...other, card: { ...card, number: card.number.token, code: card.code.token } }
    for (const variant of [other, bare]) {
      const next = clientJson<{ challenges?: Array<{ name: string }> }>(await pay(fixture.app, { ...variant, hints: frame.hints }))
      assert.equal(next.challenges?.[0]?.name, 'tds-challenge', 'on to the challenge, no loop back to the fingerprint step')
    }
    const changed = { ...other, custom: { orderId: 7, lines: [{ sku: 'b', qty: 1 }] } }
    const loop = clientJson<{ challenges?: Array<{ name: string }> }>(await pay(fixture.app, { ...changed, hints: frame.hints }))
    assert.equal(loop.challenges?.[0]?.name, 'tds-fingerprint', 'changed content still voids the proofs')
  })

  it('answers over the rate limit with 429, Retry-After and the code RATE_LIMITED in the client shape', async (t) => {
    const fixture = await clientFixture(t, { env: { PAYMENTS_RATE_LIMIT: '3/min' } })
    let last = await fixture.app.inject({ method: 'POST', url: '/vault', headers: VERSION, payload: { type: 'pcsc', value: '123' } })
    for (let index = 0; index < 4 && last.statusCode !== 429; index++) {
      last = await fixture.app.inject({ method: 'POST', url: '/vault', headers: VERSION, payload: { type: 'pcsc', value: '123' } })
    }
    const body = expectClientError(last, 'RATE_LIMITED', 429)
    assert.match(String(body.message), /retry in \d+ s/)
    assert.match(String(last.headers['retry-after']), /^\d+$/)
    assert.equal(last.headers['x-status-code'], 'RATE_LIMITED')
    fixture.clock.advance(60_000)
    assert.equal((await fixture.app.inject({ method: 'POST', url: '/vault', headers: VERSION, payload: { type: 'pcsc', value: '123' } })).statusCode, 200)
  })

  it('names the right scheme when a card is not supported', async (t) => {
    const fixture = await clientFixture(t)
    const base = { tds: { challenge: false, fingerprint: 'unavailable' } }
    const run = async (number: string, test: Record<string, unknown> = base) => pay(fixture.app, await paymentBody(fixture.app, fixture.key, { number, test }))
    const simulated = expectClientError(await run('4111111111111111', { ...base, card: { scheme: 'unsupported' } }), 'PAYMENT_CARD_SCHEME_UNSUPPORTED')
    assert.equal(simulated.message, 'This type of card is not supported. Try with any Visa or Mastercard.', 'a Visa number is not called an unsupported Visa')
    const amexSimulated = expectClientError(await run('378282246310005', { ...base, card: { scheme: 'unsupported' } }), 'PAYMENT_CARD_SCHEME_UNSUPPORTED')
    assert.match(String(amexSimulated.message), /^American Express is not supported\./)
    assert.match(String(expectClientError(await run('5019717010103742'), 'PAYMENT_CARD_SCHEME_UNSUPPORTED').message), /^Dankort is not supported\./)
    assert.match(String(expectClientError(await run('2200000000000004'), 'PAYMENT_CARD_SCHEME_UNSUPPORTED').message), /^Mir is not supported\./)
    assert.match(String(expectClientError(await run('6759649826438453'), 'PAYMENT_CARD_SCHEME_UNSUPPORTED').message), /^Maestro is not supported\./)
  })

  it('keeps non-ASCII text as sent; the statement descriptor folds it to ASCII, or falls back to the merchant’s', async (t) => {
    const fixture = await clientFixture(t)
    const cases = [
      { text: 'Kaffe på Ærø – ordre 17', descriptor: 'Kaffe pa AEro - ordre' },
      { text: 'Straße 5, Łódź', descriptor: 'Strasse 5, Lodz' },
      { text: '東京の珈琲 ☕', descriptor: 'Coffee & John' },
    ]
    for (const { text, descriptor } of cases) {
      const { final } = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { text }))
      const { authorizationId } = clientJson<{ authorizationId: string }>(final)
      const row = await fixture.db.selectFrom('payments_transactions').select(['text', 'descriptor']).where('id', '=', authorizationId).executeTakeFirstOrThrow()
      assert.equal(row.text, text, 'stored as sent')
      assert.equal(row.descriptor, descriptor)
      assert.equal((await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction.descriptor, descriptor)
    }
  })
})
