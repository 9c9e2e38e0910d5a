import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp } from '../helpers/build-app.ts'
import { assertOwnersErrorShape } from '../helpers/error-shapes.ts'
import { BrowserClient, PASSWORD } from '../services/authn/helpers.ts'
import { basic, createApp, createMerchant, merchantAttributes } from '../services/payments/helpers.ts'

/** Issue 25 §6: text that cannot be kept as sent (a lone surrogate, NUL) is refused alike in every service and on both engines. */

const ADMIN = 'text-admin@example.org'
const NOT_TEXT = [
  { text: '\ud800', message: /must be well-formed Unicode text/ },
  { text: 'a\udfff', message: /must be well-formed Unicode text/ },
  { text: 'a\u0000b', message: /must not contain NUL/ },
]

describe('text in requests is well-formed and free of NUL', () => {
  it('answers 400 naming the field, in each service’s shape, for a body field, a nested field and an object key', async (t) => {
    const test = await buildTestApp(t, { env: { AUTHN_ADMIN_EMAIL: ADMIN, AUTHN_ADMIN_PASSWORD: PASSWORD } })
    const { app } = test
    const browser = new BrowserClient(app, '/api')
    assert.equal((await browser.login(ADMIN)).statusCode, 200)
    const { key } = await createApp(app)
    const merchant = await createMerchant(app, key)
    for (const { text, message } of NOT_TEXT) {
      const cases = [
        { url: '/v1/chat', body: { sessionId: 'text-1', userText: `hi ${text}` }, field: 'userText' },
        { url: '/v1/chat', body: { userText: 'hi', meta: { [`k${text}`]: 1 } }, field: `meta.k${text}` },
        { url: '/v1/tts', body: { text: `hi ${text}` }, field: 'text' },
        { url: `/merchants/${merchant.id}/transactions`, headers: { authorization: basic(key) }, body: { currency: 'EUR', amount: 1, transactionId: `txn${text}` }, field: 'transactionId' },
        { url: '/merchants', headers: { authorization: basic(key) }, body: { ...merchantAttributes, name: `Shop ${text}` }, field: 'name' },
      ]
      for (const { url, headers, body, field } of cases) {
        const response = await app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
        const note = `${url} ${field} ${JSON.stringify(text)}: ${response.body}`
        assert.equal(response.statusCode, 400, note)
        assertOwnersErrorShape(url, 400, response.headers['content-type'], response.body)
        assert.match(response.body, message, note)
      }
      const eperson = await browser.request('POST', 'eperson/epersons', { json: { email: `someone${text}@example.org`, password: 'long enough password' } })
      assert.equal(eperson.statusCode, 400, eperson.body)
      assertOwnersErrorShape('/api/eperson/epersons', 400, eperson.headers['content-type'], eperson.body)
      assert.match(eperson.json().message, message)
    }
  })

  it('the hosted payment page answers its 400 page, not a 500, for NUL in its query', async (t) => {
    const { app } = await buildTestApp(t, { services: ['payments'] })
    const response = await app.inject({ method: 'GET', url: '/pos?key=x&value=%00' })
    assert.equal(response.statusCode, 400, response.body)
    assert.match(String(response.headers['content-type']), /^text\/html/)
  })

  it('keeps other text exactly as sent: controls, right-to-left, combining marks, zero-width, emoji, CJK', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const userText = 'a\u0001\u001b\u007f\u0085b مرحبا \u202eשלום e\u0301\u0302 \u200b\u200d\ufeff 👩\u200d👩\u200d👧 🇩🇰 你好 𠜎'
    const chat = await app.inject({ method: 'POST', url: '/v1/chat', payload: { sessionId: 'text-2', userText } })
    assert.equal(chat.statusCode, 200, chat.body)
    const history = await app.inject({ method: 'GET', url: '/v1/session/text-2/history' })
    assert.equal(history.json().messages[0].content, userText)
  })
})
