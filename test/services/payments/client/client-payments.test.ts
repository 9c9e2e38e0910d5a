import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSealer } from '../../../../src/services/payments/modules/vault/vault.crypto.ts'
import type { VaultTables } from '../../../../src/services/payments/modules/vault/vault.table.ts'
import type { Kysely } from 'kysely'
import { basic, createApp, createMerchant, parseList } from '../helpers.ts'
import { clientFixture, clientJson, expectClientError, pay, paymentBody, runPayment, tokenize, VERSION } from './helpers.ts'

const VAULT_KEY = 'a1'.repeat(32)

describe('POST /vault', () => {
  it('exchanges a card number for an opaque token: one JSON line, open CORS, nothing written in clear', async (t) => {
    const fixture = await clientFixture(t)
    const response = await fixture.app.inject({
      method: 'POST',
      url: '/vault',
      headers: { ...VERSION, origin: 'https://shop.example' },
      payload: { type: 'pcn', value: '4111 1111 1111 1111' },
    })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.headers['access-control-allow-origin'], '*')
    const { token } = clientJson<{ token: string }>(response)
    assert.ok(token.length >= 40)
    assert.ok(!token.includes('4111') && !Buffer.from(token.split('.').at(-1) ?? '', 'base64url').toString('latin1').includes('4111'), 'sealed, not encoded')
    const again = clientJson<{ token: string }>(await fixture.app.inject({ method: 'POST', url: '/vault', headers: VERSION, payload: { type: 'pcn', value: '4111111111111111' } }))
    assert.notEqual(again.token, token, 'a fresh token each time')
    const vaultDb = fixture.db as unknown as Kysely<VaultTables>
    assert.deepEqual(await vaultDb.selectFrom('payments_vault_spent_tokens').selectAll().execute(), [], 'handing out a token writes nothing')
    assert.deepEqual(await vaultDb.selectFrom('payments_vault_cards').selectAll().execute(), [])
  })

  it('refuses an edited token, and one sealed under another vault key', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key)
    const card = body.card as { number: { token: string } }
    const [version, keyId, iv, tag, sealed] = card.number.token.split('.')
    const flipped = Buffer.from(sealed, 'base64url')
    flipped[0] ^= 1
    const edited = [version, keyId, iv, tag, flipped.toString('base64url')].join('.')
    assert.equal(expectClientError(await pay(fixture.app, { ...body, card: { ...card, number: { token: edited } } }), 'TOKEN_INVALID').path, 'card.number')
    const other = await clientFixture(t, { env: { PAYMENTS_VAULT_KEY: VAULT_KEY } })
    const foreign = await paymentBody(other.app, fixture.key)
    expectClientError(await pay(fixture.app, { ...body, card: { ...card, number: (foreign.card as { number: unknown }).number } }), 'TOKEN_INVALID')
  })

  it('accepts a security code and Paylike test numbers, refuses bad values with REQUEST_INVALID', async (t) => {
    const { app } = await clientFixture(t)
    await tokenize(app, 'pcsc', '123')
    await tokenize(app, 'pcsc', '1234')
    await tokenize(app, 'pcn', '1000 0000 0000 0000')
    await tokenize(app, 'pcn', '4100000000000000')
    for (const payload of [
      { type: 'pcn', value: '4111111111111112' },
      { type: 'pcn', value: '411111111' },
      { type: 'pcn', value: '41111111111111111111' },
      { type: 'pcsc', value: '12' },
      { type: 'pcsc', value: 'abc' },
      { type: 'pan', value: '4111111111111111' },
      { value: '4111111111111111' },
    ]) {
      const response = await app.inject({ method: 'POST', url: '/vault', headers: VERSION, payload })
      const body = expectClientError(response, 'REQUEST_INVALID')
      assert.ok(!String(body.message).includes('4111111111111'), 'the value is never echoed')
    }
  })

  it('needs Accept-Version: 1', async (t) => {
    const { app } = await clientFixture(t)
    const payload = { type: 'pcn', value: '4111111111111111' }
    expectClientError(await app.inject({ method: 'POST', url: '/vault', payload }), 'VERSION_MISSING')
    expectClientError(await app.inject({ method: 'POST', url: '/vault', headers: { 'accept-version': '2' }, payload }), 'VERSION_UNSUPPORTED')
  })

  it('answers malformed JSON with BODY_INVALID without quoting the body', async (t) => {
    const { app } = await clientFixture(t)
    const response = await app.inject({
      method: 'POST',
      url: '/vault',
      headers: { ...VERSION, 'content-type': 'application/json' },
      payload: '{"type":"pcn","value":"4111111111111111"',
    })
    const body = expectClientError(response, 'BODY_INVALID')
    assert.ok(!response.body.includes('4111'), String(body.message))
  })

  it('answers CORS preflights for the client routes only', async (t) => {
    const { app } = await clientFixture(t)
    for (const url of ['/vault', '/payments', '/payments/challenges/tds-challenge']) {
      const response = await app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'accept-version,content-type' },
      })
      assert.equal(response.statusCode, 204, url)
      assert.equal(response.headers['access-control-allow-origin'], '*')
      assert.match(String(response.headers['access-control-allow-headers']), /Accept-Version/)
    }
    const merchantApi = await app.inject({ method: 'GET', url: '/me', headers: { origin: 'https://shop.example' } })
    assert.equal(merchantApi.headers['access-control-allow-origin'], undefined)
  })
})

describe('POST /payments', () => {
  it('authorizes a frictionless test payment; the merchant API sees the transaction', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { text: 'Order 17', custom: { orderId: 17 } })
    const { final, steps } = await runPayment(fixture.app, body)
    assert.deepEqual(steps, ['tds-fingerprint'])
    assert.equal(final.statusCode, 200, final.body)
    const { authorizationId } = clientJson<{ authorizationId: string }>(final)
    assert.match(authorizationId, /^[0-9a-f]{24}$/)
    const transaction = (await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction
    assert.equal(transaction.merchantId, fixture.merchant.id)
    assert.equal(transaction.amount, 195)
    assert.equal(transaction.currency, 'EUR')
    assert.equal(transaction.pendingAmount, 195)
    assert.equal(transaction.successful, true)
    assert.equal(transaction.test, true)
    assert.equal(transaction.tds, 'full')
    assert.equal(transaction.recurring, false)
    assert.equal(transaction.descriptor, 'Order 17')
    assert.deepEqual(transaction.custom, { orderId: 17 })
    assert.equal(transaction.card.bin, '411111')
    assert.equal(transaction.card.last4, '1111')
    assert.equal(transaction.card.scheme, 'visa')
    assert.equal(transaction.card.expiry, '2030-12-31T23:59:59.999Z')
  })

  it('accepts bare token strings and the documented test numbers as Visa', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { number: '1000000000000000' })
    const card = body.card as { number: { token: string }; code: { token: string } }
    const { final } = await runPayment(fixture.app, { ...body, card: { ...card, number: card.number.token, code: card.code.token } })
    const { authorizationId } = clientJson<{ authorizationId: string }>(final)
    const transaction = (await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction
    assert.equal(transaction.card.scheme, 'visa')
    assert.equal(transaction.card.last4, '0000')
  })

  it('spends the tokens: a second authorization with them is TOKEN_INVALID', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false, fingerprint: 'unavailable' } } })
    assert.equal((await pay(fixture.app, body)).statusCode, 200)
    const again = expectClientError(await pay(fixture.app, body), 'TOKEN_INVALID')
    assert.equal(again.path, 'card.number')
  })

  it('authorizes once when two requests race with the same tokens', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false, fingerprint: 'unavailable' } } })
    const results = await Promise.all([pay(fixture.app, body), pay(fixture.app, body), pay(fixture.app, body)])
    assert.deepEqual(results.map((response) => response.statusCode).sort(), [200, 400, 400])
    for (const response of results.filter((item) => item.statusCode === 400)) expectClientError(response, 'TOKEN_INVALID')
    assert.equal(parseList(await fixture.call('GET', `/merchants/${fixture.merchant.id}/transactions?limit=10`)).length, 1)
  })

  it('refuses unknown, expired, mistyped and foreign tokens with the path', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key)
    const card = body.card as Record<string, unknown>
    assert.equal(expectClientError(await pay(fixture.app, { ...body, card: { ...card, number: { token: 'nope' } } }), 'TOKEN_INVALID').path, 'card.number')
    assert.equal(expectClientError(await pay(fixture.app, { ...body, card: { ...card, code: card.number } }), 'TOKEN_TYPE_UNEXPECTED').path, 'card.code')
    assert.equal(expectClientError(await pay(fixture.app, { ...body, card: { ...card, number: card.code } }), 'TOKEN_TYPE_UNEXPECTED').path, 'card.number')
    fixture.clock.advance(31 * 60_000)
    assert.equal(expectClientError(await pay(fixture.app, body), 'TOKEN_INVALID').path, 'card.number')
  })

  it('needs the version, a known key and matching test modes', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key)
    expectClientError(await fixture.app.inject({ method: 'POST', url: '/payments', payload: body }), 'VERSION_MISSING')
    expectClientError(await pay(fixture.app, { ...body, integration: { key: '00000000-0000-4000-8000-000000000000' } }), 'PAYMENT_INTEGRATION_KEY_UNKNOWN')
    const { test: _test, ...withoutTest } = body
    expectClientError(await pay(fixture.app, withoutTest), 'TEST_MODE_MIXED')

    const live = await createMerchant(fixture.app, fixture.owner.key, { test: false })
    const liveBody = await paymentBody(fixture.app, String(live.key))
    expectClientError(await pay(fixture.app, liveBody), 'TEST_MODE_MIXED')
  })

  it('answers a live merchant clearly that no acquirer is configured, and refuses test numbers there', async (t) => {
    // Live merchants need a vault key supplied from outside (test/services/payments/vault/secrets.test.ts).
    const fixture = await clientFixture(t, { env: { PAYMENTS_VAULT_KEY: VAULT_KEY } })
    const live = await createMerchant(fixture.app, fixture.owner.key, { test: false })
    const body = await paymentBody(fixture.app, String(live.key), { test: null })
    const error = expectClientError(await pay(fixture.app, body), 'PAYMENT_METHOD_ERROR')
    assert.match(String(error.message), /No card acquirer is configured/)
    expectClientError(
      await pay(fixture.app, await paymentBody(fixture.app, String(live.key), { test: null, number: '1000000000000000' })),
      'PAYMENT_CARD_NUMBER_INVALID',
    )
  })

  it('validates amounts against ISO 4217 exponents', async (t) => {
    const fixture = await clientFixture(t)
    const frictionless = { tds: { challenge: false, fingerprint: 'unavailable' } }
    const cases: Array<[{ currency: string; exponent: number; value: number }, number | string]> = [
      [{ currency: 'EUR', exponent: 3, value: 1995 }, 'REQUEST_INVALID'],
      [{ currency: 'EUR', exponent: 3, value: 1990 }, 199],
      [{ currency: 'EUR', exponent: 0, value: 2 }, 200],
      [{ currency: 'JPY', exponent: 0, value: 500 }, 500],
      [{ currency: 'JPY', exponent: 2, value: 150 }, 'REQUEST_INVALID'],
      [{ currency: 'BHD', exponent: 3, value: 1234 }, 1234],
      [{ currency: 'XXX', exponent: 2, value: 100 }, 'REQUEST_INVALID'],
      [{ currency: 'EUR', exponent: 2, value: 0 }, 'REQUEST_INVALID'],
    ]
    for (const [amount, expected] of cases) {
      const response = await pay(fixture.app, await paymentBody(fixture.app, fixture.key, { amount, test: frictionless }))
      if (typeof expected === 'string') {
        expectClientError(response, expected)
        continue
      }
      assert.equal(response.statusCode, 200, `${JSON.stringify(amount)}: ${response.body}`)
      const { authorizationId } = clientJson<{ authorizationId: string }>(response)
      const transaction = (await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction
      assert.equal(transaction.amount, expected, JSON.stringify(amount))
      assert.equal(transaction.currency, amount.currency)
    }
  })

  it('refuses malformed bodies with REQUEST_INVALID', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key)
    const card = body.card as Record<string, unknown>
    for (const bad of [
      { ...body, card: { ...card, expiry: { month: 13, year: 2030 } } },
      { ...body, card: { ...card, expiry: { month: 1, year: 1999 } } },
      { ...body, amount: { currency: 'EUR', value: 100 } },
      { ...body, test: { card: { status: 'stolen' } } },
      { ...body, text: 'x' },
      { ...body, integration: {} },
      { integration: body.integration },
    ]) {
      expectClientError(await pay(fixture.app, bad), 'REQUEST_INVALID')
    }
  })

  it('follows the test object: schemes, statuses, codes, limits and balances', async (t) => {
    const fixture = await clientFixture(t)
    const run = async (options: Parameters<typeof paymentBody>[2]) => pay(fixture.app, await paymentBody(fixture.app, fixture.key, options))
    const eur = (value: number) => ({ currency: 'EUR', exponent: 2, value })
    const base = { tds: { challenge: false, fingerprint: 'unavailable' } }
    expectClientError(await run({ test: { ...base, card: { scheme: 'unsupported' } } }), 'PAYMENT_CARD_SCHEME_UNSUPPORTED')
    expectClientError(await run({ test: { ...base, card: { scheme: 'unknown' } } }), 'PAYMENT_CARD_SCHEME_UNKNOWN')
    expectClientError(await run({ test: { ...base, card: { code: 'invalid' } } }), 'PAYMENT_CARD_SECURITY_CODE_INVALID')
    expectClientError(await run({ test: { ...base, card: { status: 'expired' } } }), 'PAYMENT_CARD_EXPIRED')
    expectClientError(await run({ test: { ...base, card: { status: 'disabled' } } }), 'PAYMENT_CARD_DISABLED')
    expectClientError(await run({ test: { ...base, card: { status: 'lost' } } }), 'PAYMENT_CARD_LOST')
    expectClientError(await run({ test: { ...base, card: { status: 'invalid' } } }), 'PAYMENT_CARD_NUMBER_INVALID')
    const poor = await run({ amount: eur(199), test: { ...base, card: { balance: eur(100) } } })
    expectClientError(poor, 'PAYMENT_INSUFFICIENT_FUNDS')
    assert.equal(poor.headers['x-status-code'], 'PAYMENT_INSUFFICIENT_FUNDS')
    expectClientError(await run({ amount: eur(199), test: { ...base, card: { limit: eur(150) } } }), 'PAYMENT_AMOUNT_LIMIT')
    expectClientError(await run({ expiry: { month: 1, year: 2020 }, test: base }), 'PAYMENT_CARD_EXPIRED')
    const vaultDb = fixture.db as unknown as Kysely<VaultTables>
    assert.deepEqual(await vaultDb.selectFrom('payments_vault_cards').select('id').execute(), [], 'no card number kept for a declined payment')
    assert.equal((await run({ amount: eur(199), test: { ...base, card: { balance: eur(199), limit: eur(199) } } })).statusCode, 200)
    assert.equal((await vaultDb.selectFrom('payments_vault_cards').select('id').execute()).length, 1)
  })

  it('recognises Visa and Mastercard by BIN; other schemes are unsupported, unknown ones unknown', async (t) => {
    const fixture = await clientFixture(t)
    const run = async (number: string) =>
      pay(fixture.app, await paymentBody(fixture.app, fixture.key, { number, test: { tds: { challenge: false, fingerprint: 'unavailable' } } }))
    for (const [number, scheme] of [
      ['5555555555554444', 'mastercard'],
      ['2223003122003222', 'mastercard'],
      ['4000056655665556', 'visa'],
    ]) {
      const response = await run(number)
      assert.equal(response.statusCode, 200, response.body)
      const transaction = (await fixture.call('GET', `/transactions/${clientJson<{ authorizationId: string }>(response).authorizationId}`)).json().transaction
      assert.equal(transaction.card.scheme, scheme)
    }
    const amex = expectClientError(await run('378282246310005'), 'PAYMENT_CARD_SCHEME_UNSUPPORTED')
    assert.match(String(amex.message), /American Express is not supported/)
    expectClientError(await run('6011111111111117'), 'PAYMENT_CARD_SCHEME_UNSUPPORTED')
    expectClientError(await run('9000000000000001'), 'PAYMENT_CARD_SCHEME_UNKNOWN')
  })

  it('keeps the sandbox card state for recurring charges: a later charge fails for insufficient funds', async (t) => {
    const fixture = await clientFixture(t)
    const eur = (value: number) => ({ currency: 'EUR', exponent: 2, value })
    const body = await paymentBody(fixture.app, fixture.key, {
      amount: eur(300),
      test: { tds: { challenge: false, fingerprint: 'unavailable' }, card: { balance: eur(500) } },
    })
    const { authorizationId } = clientJson<{ authorizationId: string }>(await pay(fixture.app, body))
    const first = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, { transactionId: authorizationId, currency: 'EUR', amount: 150 })
    assert.equal(first.statusCode, 201, first.body)
    const second = await fixture.call('POST', `/merchants/${fixture.merchant.id}/transactions`, {
      transactionId: authorizationId,
      currency: 'EUR',
      amount: 100,
    })
    assert.equal(second.statusCode, 400, second.body)
    assert.equal(second.json().code, 7)
  })

  it('seals stored card numbers with AES-256-GCM under PAYMENTS_VAULT_KEY; the card_ref names the sealed row', async (t) => {
    const fixture = await clientFixture(t, { env: { PAYMENTS_VAULT_KEY: VAULT_KEY } })
    const body = await paymentBody(fixture.app, fixture.key, { number: '5555555555554444', test: { tds: { challenge: false, fingerprint: 'unavailable' } } })
    const { authorizationId } = clientJson<{ authorizationId: string }>(await pay(fixture.app, body))
    const row = await fixture.db.selectFrom('payments_transactions').select('card_ref').where('id', '=', authorizationId).executeTakeFirstOrThrow()
    assert.match(String(row.card_ref), /^vcard_[0-9a-f]{24}$/)
    const vaultDb = fixture.db as unknown as Kysely<VaultTables>
    const card = await vaultDb.selectFrom('payments_vault_cards').selectAll().where('id', '=', String(row.card_ref)).executeTakeFirstOrThrow()
    assert.ok(!card.sealed.includes('5555555555554444'))
    const sealer = createSealer(Buffer.from(VAULT_KEY, 'hex'))
    assert.equal(sealer.open(card.sealed, `card:${card.id}`), '5555555555554444')
    assert.equal(sealer.open(card.sealed, 'card:vcard_other'), undefined, 'bound to its row')
    assert.equal(createSealer(Buffer.from('b2'.repeat(32), 'hex')).open(card.sealed, `card:${card.id}`), undefined, 'another key cannot open it')
    assert.equal((await vaultDb.selectFrom('payments_vault_keys').selectAll().execute()).length, 0, 'no generated key when one is configured')
  })

  it('generates the vault key once into the secrets file, never the database, when PAYMENTS_VAULT_KEY is unset', async (t) => {
    const fixture = await clientFixture(t)
    await tokenize(fixture.app, 'pcn', '4111111111111111')
    assert.deepEqual(await (fixture.db as unknown as Kysely<VaultTables>).selectFrom('payments_vault_keys').selectAll().execute(), [])
    const keys = (await fixture.secretStore.load()).secrets['payments.vault'] ?? []
    assert.equal(keys.length, 1)
    assert.match(keys[0].secret, /^[0-9a-f]{64}$/)
  })

  it('answers unknown client paths with ENDPOINT_NOT_FOUND in the client shape', async (t) => {
    const { app } = await clientFixture(t)
    for (const [method, url] of [['POST', '/payments/nothing/here'], ['GET', '/payments/tds/challenge']] as const) {
      const response = await app.inject({ method, url, headers: VERSION })
      expectClientError(response, 'ENDPOINT_NOT_FOUND', 404)
    }
  })

  it('does not let one app pay into a merchant with a key taken from the merchant API', async (t) => {
    const fixture = await clientFixture(t)
    const other = await createApp(fixture.app, 'Other')
    const body = await paymentBody(fixture.app, other.key)
    expectClientError(await pay(fixture.app, body), 'PAYMENT_INTEGRATION_KEY_UNKNOWN')
    const me = await fixture.app.inject({ method: 'GET', url: '/me', headers: { authorization: basic(other.key) } })
    assert.equal(me.statusCode, 200)
  })
})
