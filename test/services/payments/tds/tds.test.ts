import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clientFixture, clientJson, expectClientError, FORM, form, frameHints, pay, paymentBody, runPayment } from '../client/helpers.ts'

describe('3-D Secure in test mode', () => {
  it('runs fingerprint then challenge with real frame pages; approving with the code authorizes with tds "full"', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { test: {} })

    const first = clientJson<{ challenges: unknown[] }>(await pay(fixture.app, body))
    assert.deepEqual(first.challenges, [{ name: 'tds-fingerprint', type: 'background-iframe', path: '/payments/challenges/tds-fingerprint' }])

    const fingerprint = clientJson<{ action: string; method: string; fields: Record<string, string>; timeout: number; hints: string[] }>(
      await pay(fixture.app, body, '/payments/challenges/tds-fingerprint', { origin: 'https://shop.example' }),
    )
    assert.match(fingerprint.action, /^http:\/\/localhost(:\d+)?\/payments\/tds\/fingerprint$/)
    assert.equal(fingerprint.method, 'POST')
    assert.ok(fingerprint.fields.threeDSMethodData)
    assert.equal(fingerprint.hints.length, 1)
    const methodPage = await fixture.app.inject({ method: 'POST', url: '/payments/tds/fingerprint', headers: FORM, payload: form(fingerprint.fields) })
    assert.equal(methodPage.statusCode, 200)
    assert.match(String(methodPage.headers['content-type']), /^text\/html/)
    assert.match(methodPage.body, /"https:\/\/shop\.example"\)/, 'posts to the origin of the paying page only')
    const hints = [...fingerprint.hints, ...frameHints(methodPage.body)]

    const second = clientJson<{ challenges: unknown[] }>(await pay(fixture.app, { ...body, hints }))
    assert.deepEqual(second.challenges, [{ name: 'tds-challenge', type: 'iframe', path: '/payments/challenges/tds-challenge' }])
    const challenge = clientJson<{ action: string; fields: { creq: string }; width: number; height: number; hints: string[] }>(
      await pay(fixture.app, { ...body, hints }, '/payments/challenges/tds-challenge'),
    )
    assert.ok(challenge.width >= 390 && challenge.height >= 400)
    const page = await fixture.app.inject({ method: 'POST', url: '/payments/tds/challenge', headers: FORM, payload: form(challenge.fields) })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /data-testid="tds-amount">€1\.95</)
    assert.match(page.body, /Coffee &#38; John/)
    assert.match(page.body, /<label for="otp">/)
    const code = /data-testid="tds-code">(\d{6})</.exec(page.body)?.[1]
    assert.ok(code)

    const wrong = await fixture.app.inject({
      method: 'POST',
      url: '/payments/tds/challenge/complete',
      headers: FORM,
      payload: form({ creq: challenge.fields.creq, code: code === '000000' ? '111111' : '000000', decision: 'approve' }),
    })
    assert.match(wrong.body, /not correct/)
    assert.doesNotMatch(wrong.body, /postMessage/)

    const done = await fixture.app.inject({
      method: 'POST',
      url: '/payments/tds/challenge/complete',
      headers: FORM,
      payload: form({ creq: challenge.fields.creq, code, decision: 'approve' }),
    })
    const final = await pay(fixture.app, { ...body, hints: [...hints, ...frameHints(done.body)] })
    assert.equal(final.statusCode, 200, final.body)
    const { authorizationId } = clientJson<{ authorizationId: string }>(final)
    assert.equal((await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction.tds, 'full')
  })

  it('fails with TDSECURE_FAILED when the cardholder rejects, or when the test says rejected', async (t) => {
    const fixture = await clientFixture(t)
    const rejected = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { test: {} }), { decision: 'reject' })
    assert.deepEqual(rejected.steps, ['tds-fingerprint', 'tds-challenge'])
    expectClientError(rejected.final, 'TDSECURE_FAILED')
    const byTest = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { test: { tds: { status: 'rejected' } } }))
    expectClientError(byTest.final, 'TDSECURE_FAILED')
    const frictionless = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false, status: 'rejected' } } }))
    expectClientError(frictionless.final, 'TDSECURE_FAILED')
  })

  it('records tds "attempt" for attempted or unavailable authentication', async (t) => {
    const fixture = await clientFixture(t)
    for (const status of ['attempted', 'unavailable']) {
      const { final, steps } = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { test: { tds: { status, challenge: false } } }))
      assert.deepEqual(steps, ['tds-fingerprint'])
      const { authorizationId } = clientJson<{ authorizationId: string }>(final)
      assert.equal((await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction.tds, 'attempt')
    }
  })

  it('skips the fingerprint when unavailable, and proceeds after a fingerprint timeout (the frame never answers)', async (t) => {
    const fixture = await clientFixture(t)
    const skipped = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { test: { tds: { fingerprint: 'unavailable' } } }))
    assert.deepEqual(skipped.steps, ['tds-challenge'])
    assert.equal(skipped.final.statusCode, 200)

    const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { fingerprint: 'timeout', challenge: false } } })
    const frame = clientJson<{ fields: Record<string, string>; hints: string[] }>(await pay(fixture.app, body, '/payments/challenges/tds-fingerprint'))
    const page = await fixture.app.inject({ method: 'POST', url: '/payments/tds/fingerprint', headers: FORM, payload: form(frame.fields) })
    assert.doesNotMatch(page.body, /postMessage/)
    const final = await pay(fixture.app, { ...body, hints: frame.hints })
    assert.ok(clientJson<{ authorizationId: string }>(final).authorizationId)
  })

  it('authorizes frictionless only with the fingerprint result signed for this payment; a garbage one, another payment’s or none is challenged', async (t) => {
    const fixture = await clientFixture(t)
    const fingerprinted = async () => {
      const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false } } })
      const frame = clientJson<{ fields: Record<string, string>; hints: string[] }>(await pay(fixture.app, body, '/payments/challenges/tds-fingerprint'))
      const page = await fixture.app.inject({ method: 'POST', url: '/payments/tds/fingerprint', headers: FORM, payload: form(frame.fields) })
      return { body, start: frame.hints, done: frameHints(page.body) }
    }
    const one = await fingerprinted()
    const other = await fingerprinted()
    const [done = ''] = one.done
    const [start = ''] = one.start
    const issued = fixture.clock.now().getTime().toString(36)
    const unproven = [
      [],
      [`tds-fp-done.${issued}.${'A'.repeat(43)}`],
      [done.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))],
      [start.replace(/^tds-fp-start/, 'tds-fp-done')],
      other.done,
    ]
    for (const extra of unproven) {
      const response = clientJson<{ challenges?: Array<{ name: string }> }>(await pay(fixture.app, { ...one.body, hints: [...one.start, ...extra] }))
      assert.deepEqual(
        response.challenges?.map((challenge) => challenge.name),
        ['tds-challenge'],
        JSON.stringify(extra),
      )
    }
    const final = await pay(fixture.app, { ...one.body, hints: [...one.start, ...one.done] })
    assert.ok(clientJson<{ authorizationId?: string }>(final).authorizationId, final.body)
  })

  it('ignores hints that were forged, edited or gathered for another payment', async (t) => {
    const fixture = await clientFixture(t)
    const one = await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false } } })
    const frame = clientJson<{ hints: string[] }>(await pay(fixture.app, one, '/payments/challenges/tds-fingerprint'))
    const other = await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false } } })
    const [hint] = frame.hints
    const edited = hint.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))
    for (const hints of [frame.hints, [edited], ['tds-fp-start.0.x'], ['tds-challenge-approved']]) {
      const response = clientJson<{ challenges?: Array<{ name: string }> }>(await pay(fixture.app, { ...other, hints }))
      assert.equal(response.challenges?.[0].name, 'tds-fingerprint', JSON.stringify(hints))
    }
    const unrelated = await pay(fixture.app, { ...one, amount: { currency: 'EUR', exponent: 2, value: 1 }, hints: frame.hints })
    assert.equal(clientJson<{ challenges?: Array<{ name: string }> }>(unrelated).challenges?.[0].name, 'tds-fingerprint', 'a changed amount voids the proofs')
  })

  it('answers PAYMENT_CHALLENGE_UNAVAILABLE for a challenge that is not the next one', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { test: {} })
    expectClientError(await pay(fixture.app, body, '/payments/challenges/tds-challenge'), 'PAYMENT_CHALLENGE_UNAVAILABLE')
    expectClientError(await pay(fixture.app, body, '/payments/challenges/nonsense'), 'PAYMENT_CHALLENGE_UNAVAILABLE')
    const live = await paymentBody(fixture.app, fixture.key, { test: { tds: { challenge: false, fingerprint: 'unavailable' } } })
    expectClientError(await pay(fixture.app, live, '/payments/challenges/tds-fingerprint'), 'PAYMENT_CHALLENGE_UNAVAILABLE')
  })

  it('shows a clear page for tampered or expired frame data', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { fingerprint: 'unavailable' } } })
    const challenge = clientJson<{ fields: { creq: string } }>(await pay(fixture.app, body, '/payments/challenges/tds-challenge'))
    for (const payload of [form({ creq: `${challenge.fields.creq}x` }), form({}), 'creq=']) {
      const page = await fixture.app.inject({ method: 'POST', url: '/payments/tds/challenge', headers: FORM, payload })
      assert.equal(page.statusCode, 400)
      assert.match(page.body, /invalid or has expired/)
    }
    fixture.clock.advance(31 * 60_000)
    const late = await fixture.app.inject({ method: 'POST', url: '/payments/tds/challenge', headers: FORM, payload: form(challenge.fields) })
    assert.equal(late.statusCode, 400)
    const bad = await fixture.app.inject({ method: 'POST', url: '/payments/tds/fingerprint', headers: FORM, payload: form({ threeDSMethodData: 'x.y' }) })
    assert.equal(bad.statusCode, 400)
  })

  it('speaks the browser language in the challenge frame (Danish)', async (t) => {
    const fixture = await clientFixture(t)
    const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { fingerprint: 'unavailable' } } })
    const challenge = clientJson<{ fields: Record<string, string> }>(await pay(fixture.app, body, '/payments/challenges/tds-challenge'))
    const page = await fixture.app.inject({
      method: 'POST',
      url: '/payments/tds/challenge',
      headers: { ...FORM, 'accept-language': 'da-DK,da;q=0.9,en;q=0.5' },
      payload: form(challenge.fields),
    })
    assert.match(page.body, /<html lang="da">/)
    assert.match(page.body, /<label for="otp">Engangskode<\/label>/)
    assert.match(page.body, />Godkend</)
  })

  it('hands out frame URLs under PAYMENTS_PUBLIC_URL when set (behind a proxy), and the page allows that origin', async (t) => {
    const fixture = await clientFixture(t, { env: { PAYMENTS_PUBLIC_URL: 'https://pay.example.com/' } })
    const body = await paymentBody(fixture.app, fixture.key, { test: {} })
    const frame = clientJson<{ action: string }>(await pay(fixture.app, body, '/payments/challenges/tds-fingerprint'))
    assert.equal(frame.action, 'https://pay.example.com/payments/tds/fingerprint')
    const page = await fixture.app.inject({ method: 'GET', url: `/pos?key=${fixture.key}&test=1&value=1` })
    assert.match(String(page.headers['content-security-policy']), /frame-src 'self' https:\/\/pay\.example\.com;/)
  })

  it('binds the merchant tds mode: a "full" merchant refuses an attempted authentication', async (t) => {
    const fixture = await clientFixture(t)
    await fixture.db.updateTable('payments_merchants').set({ tds_mode: 'full' }).where('id', '=', fixture.merchant.id).execute()
    const { final } = await runPayment(fixture.app, await paymentBody(fixture.app, fixture.key, { test: { tds: { status: 'attempted', challenge: false } } }))
    expectClientError(final, 'TDSECURE_REQUIRED')
  })
})
