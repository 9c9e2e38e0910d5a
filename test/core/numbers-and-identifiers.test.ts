import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_IDENTIFIER_LENGTH } from '../../src/core/http/identifiers.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { BrowserClient } from '../services/authn/helpers.ts'
import { basic, createApp, createMerchant, merchantAttributes } from '../services/payments/helpers.ts'

/** Issue 13 §2: numbers are finite, identifiers have one length, all field errors come at once. */

const UNREPRESENTABLE = ['1e309', 'Infinity', '-Infinity', '1e300', '9007199254740993']

describe('numbers in requests are finite and exact', () => {
  it('answers 400 in each service’s shape for a non-finite or unrepresentable number in a query', async (t) => {
    const { app } = await buildTestApp(t)
    const { key } = await createApp(app)
    const merchant = await createMerchant(app, key)
    const cases = [
      { url: (n: string) => `/v1/sessions?limit=${n}`, check: (body: Record<string, unknown>) => assert.match(String(body.detail), /^limit must be/) },
      { url: (n: string) => `/api/authn/status/specialGroups?size=${n}`, check: (body: Record<string, unknown>) => assert.match(String(body.message), /^size must be/) },
      { url: (n: string) => `/api/authn/status/specialGroups?page=${n}`, check: (body: Record<string, unknown>) => assert.match(String(body.message), /^page must be/) },
      {
        url: (n: string) => `/merchants/${merchant.id}/transactions?limit=${n}`,
        headers: { authorization: basic(key) },
        check: (body: unknown) => assert.deepEqual((body as Array<{ field: string }>).map((problem) => problem.field), ['limit']),
      },
    ]
    for (const value of UNREPRESENTABLE) {
      for (const { url, headers, check } of cases) {
        const response = await app.inject({ method: 'GET', url: url(value), headers })
        assert.equal(response.statusCode, 400, `${url(value)}: ${response.body}`)
        check(response.json())
      }
    }
  })

  it('refuses a number a JSON body spells as a string or an overflowing literal', async (t) => {
    const { app } = await buildTestApp(t)
    const { key } = await createApp(app)
    const merchant = await createMerchant(app, key)
    for (const amount of ['"1e309"', '1e400', '"Infinity"', '1e300']) {
      const response = await app.inject({
        method: 'POST',
        url: `/merchants/${merchant.id}/transactions`,
        headers: { authorization: basic(key), 'content-type': 'application/json' },
        payload: `{"currency":"EUR","amount":${amount},"transactionId":"x"}`,
      })
      assert.equal(response.statusCode, 400, `${amount}: ${response.body}`)
      assert.ok(
        (response.json() as Array<{ field: string }>).some((problem) => problem.field === 'amount'),
        response.body,
      )
    }
  })

  it('refuses them in a form body too', async (t) => {
    const { app } = await buildTestApp(t)
    const { key } = await createApp(app)
    const merchant = await createMerchant(app, key)
    const response = await app.inject({
      method: 'POST',
      url: `/merchants/${merchant.id}/transactions`,
      headers: { authorization: basic(key), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'currency=EUR&amount=1e309&transactionId=x',
    })
    assert.equal(response.statusCode, 400, response.body)
  })
})

describe('identifiers have one maximum length', () => {
  it('an avatar session id of the longest accepted length can be used, read and deleted', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const longest = 's'.repeat(MAX_IDENTIFIER_LENGTH)
    const chat = await app.inject({ method: 'POST', url: '/v1/chat', payload: { sessionId: longest, userText: 'hello' } })
    assert.equal(chat.statusCode, 200, chat.body)
    const history = await app.inject({ method: 'GET', url: `/v1/session/${longest}/history` })
    assert.equal(history.statusCode, 200, history.body)
    assert.equal(history.json().messages.length, 2)
    const deleted = await app.inject({ method: 'DELETE', url: `/v1/session/${longest}` })
    assert.equal(deleted.statusCode, 200, deleted.body)
  })

  it('one character more is refused by the body schema and by the router alike', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const tooLong = 's'.repeat(MAX_IDENTIFIER_LENGTH + 1)
    const chat = await app.inject({ method: 'POST', url: '/v1/chat', payload: { sessionId: tooLong, userText: 'hello' } })
    assert.equal(chat.statusCode, 400)
    assert.match(chat.json().detail, /sessionId must be at most 128 characters/)
    const history = await app.inject({ method: 'GET', url: `/v1/session/${tooLong}/history` })
    assert.equal(history.statusCode, 414)
    assert.equal(typeof history.json().detail, 'string')
  })
})

describe('a body with several invalid fields', () => {
  it('gets every problem in one answer, the IBAN checksum included', async (t) => {
    const { app } = await buildTestApp(t, { services: ['payments'] })
    const { key } = await createApp(app)
    const response = await app.inject({
      method: 'POST',
      url: '/merchants',
      headers: { authorization: basic(key) },
      payload: { ...merchantAttributes, email: 'not an address', currency: 'XXX', bank: { iban: 'DK5000400440116244' } },
    })
    assert.equal(response.statusCode, 400)
    const fields = (response.json() as Array<{ field: string; message: string }>).map((problem) => problem.field).sort()
    assert.deepEqual(fields, ['bank.iban', 'currency', 'email'])
  })

  it('the authn eperson form gets every problem at once too', async (t) => {
    const { app } = await buildTestApp(t, { services: ['authn'], env: { AUTHN_ADMIN_EMAIL: 'admin@example.org', AUTHN_ADMIN_PASSWORD: 'correct horse battery' } })
    const browser = new BrowserClient(app, '/api')
    const login = await browser.login('admin@example.org')
    assert.equal(login.statusCode, 200, login.body)
    const response = await browser.request('POST', 'eperson/epersons', { json: { email: 'x', password: 'p'.repeat(2000) } })
    assert.equal(response.statusCode, 400, response.body)
    assert.match(response.json().message, /email/)
    assert.match(response.json().message, /password/)
  })
})
