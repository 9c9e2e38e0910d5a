import assert from 'node:assert/strict'
import { once } from 'node:events'
import { it } from 'node:test'
import { startTriadProcess } from '../../../helpers/triad-process.ts'

const NUMBER = '4111111111111111'

// A real `triad serve` at the most verbose log level: whatever happens to a card number — a
// payment, a refused number, a body that is not JSON, an unknown path — the logs never hold it
// (nor a vault token).
it('never writes a card number or a vault token to the log, even at trace level', { timeout: 60_000 }, async (t) => {
  const { base, child, output } = await startTriadProcess(t, { LOG_LEVEL: 'trace', TRIAD_SERVICES: 'payments', PAYMENTS_RATE_LIMIT: '0' })
  const json = { 'content-type': 'application/json', 'accept-version': '1' }
  const post = async (path: string, body: string, headers: Record<string, string> = json) => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers, body })
    return { status: response.status, body: await response.text() }
  }
  const appKey = JSON.parse((await post('/apps', '{}', { 'content-type': 'application/json' })).body).app.key
  const created = await fetch(`${base}/merchants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`:${appKey}`).toString('base64')}` },
    body: JSON.stringify({ currency: 'EUR', email: 'l@example.com', website: 'https://example.com', descriptor: 'LOGS', company: { country: 'DK' }, test: true }),
  })
  const key = ((await created.json()) as { merchant: { key: string } }).merchant.key
  const number = JSON.parse((await post('/vault', JSON.stringify({ type: 'pcn', value: NUMBER }))).body)
  const code = JSON.parse((await post('/vault', '{"type":"pcsc","value":"987"}')).body)
  const payment = {
    integration: { key },
    amount: { currency: 'EUR', exponent: 2, value: 100 },
    card: { number, code, expiry: { month: 1, year: 2031 } },
    test: { tds: { challenge: false, fingerprint: 'unavailable' } },
    hints: [],
  }
  assert.equal((await post('/payments', JSON.stringify(payment))).status, 200)
  assert.equal((await post('/vault', `{"type":"pcn","value":"${NUMBER}"`)).status, 400, 'not JSON')
  assert.equal((await post('/vault', `{"type":"pcn","value":"${NUMBER.slice(0, -1)}2"}`)).status, 400, 'fails Luhn')
  assert.equal((await post('/vault', `{"type":"pcn","value":"${NUMBER}${NUMBER}"}`)).status, 400, 'too long')
  assert.equal((await post('/payments/nowhere', `{"value":"${NUMBER}"}`)).status, 404)
  child.kill('SIGTERM')
  // 'close', not 'exit': the last lines may still be in the pipes when the process exits.
  await once(child, 'close')
  const logs = output()

  assert.match(logs, /request completed/, 'the log was captured')
  assert.ok(!logs.includes(NUMBER) && !logs.includes('411111111111111'), 'no card number in the log')
  assert.ok(!logs.includes(number.token) && !logs.includes(code.token), 'no vault token in the log')
})
