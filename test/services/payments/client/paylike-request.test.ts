import assert from 'node:assert/strict'
import request from '@paylike/request'
import { describe, it, type TestContext } from 'node:test'
import { clientFixture, frameHints } from './helpers.ts'

// Paylike's own request library (npm @paylike/request, what @paylike/client and the web SDK use
// for every call to the vault and /payments), pointed at Triad over a real socket. It reads
// newline-delimited JSON and turns a 4xx body into a ResponseError carrying `code`.

async function start(t: TestContext) {
  const fixture = await clientFixture(t)
  await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const address = fixture.app.server.address()
  assert.ok(address && typeof address === 'object')
  const host = `http://127.0.0.1:${address.port}`
  const client = (path: string, data: Record<string, unknown>) => request(`${host}${path}`, { version: 1, data, fetch: globalThis.fetch, timeout: 10_000 }).first()
  return { ...fixture, client }
}

describe('Paylike client library against Triad', () => {
  it('tokenizes, follows the challenge loop and gets the authorization id', async (t) => {
    const fixture = await start(t)
    const { client: call, key } = fixture
    const number = await call('/vault', { type: 'pcn', value: '4100000000000000' })
    const code = await call('/vault', { type: 'pcsc', value: '123' })
    assert.equal(typeof number.token, 'string')
    const payment = {
      integration: { key },
      amount: { currency: 'EUR', exponent: 2, value: 995 },
      card: { number, code, expiry: { month: 6, year: 2031 } },
      test: { tds: { challenge: false } },
    }
    let hints: string[] = []
    const first = await call('/payments', { ...payment, hints })
    const challenges = first.challenges as Array<{ name: string; path: string }>
    assert.equal(challenges[0].name, 'tds-fingerprint')
    const frame = await call(challenges[0].path, { ...payment, hints })
    hints = [...hints, ...(frame.hints as string[])]
    // The hidden frame, as the browser loads it: its form posted, its page's hints collected.
    const page = await fetch(String(frame.action), { method: 'POST', body: new URLSearchParams(frame.fields as Record<string, string>) })
    hints = [...hints, ...frameHints(await page.text())]
    const final = await call('/payments', { ...payment, hints })
    assert.match(String(final.authorizationId), /^[0-9a-f]{24}$/)
    const transaction = (await fixture.call('GET', `/transactions/${final.authorizationId}`)).json().transaction
    assert.equal(transaction.amount, 995)
    assert.equal(transaction.card.scheme, 'visa')
  })

  it('surfaces Triad errors as ResponseError with the status code', async (t) => {
    const { client: call, key } = await start(t)
    const number = await call('/vault', { type: 'pcn', value: '4111111111111111' })
    const error = await call('/payments', { integration: { key }, card: { number, expiry: { month: 6, year: 2031 } }, hints: [] }).then(
      () => assert.fail('expected an error'),
      (caught: unknown) => caught,
    )
    assert.ok(error instanceof request.ResponseError, String(error))
    assert.equal((error as Error & { code?: string }).code, 'TEST_MODE_MIXED')
  })
})
