import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clientFixture, clientJson, expectClientError, FORM, form, frameHints, pay, paymentBody } from '../client/helpers.ts'

type Fixture = Awaited<ReturnType<typeof clientFixture>>

/** The challenge form of a bank page: where it posts, and its hidden fields. */
function challengeForm(html: string) {
  const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1]
  const creq = /name="creq" value="([^"]+)"/.exec(html)?.[1]
  const tries = /name="tries" value="([^"]+)"/.exec(html)?.[1]
  const code = /data-testid="tds-code">(\d{6})</.exec(html)?.[1]
  assert.ok(action && creq && tries && code, `a challenge form: ${html.slice(0, 200)}`)
  return { action, creq, tries, code }
}

/** Starts a challenged payment (no fingerprint step) and opens the bank page. */
async function openChallenge(fixture: Fixture, options: { amount?: { currency: string; exponent: number; value: number }; headers?: Record<string, string> } = {}) {
  const body = await paymentBody(fixture.app, fixture.key, { test: { tds: { fingerprint: 'unavailable' } }, amount: options.amount })
  const answer = clientJson<{ action: string; fields: Record<string, string>; width: number; height: number; hints: string[] }>(
    await pay(fixture.app, body, '/payments/challenges/tds-challenge', options.headers),
  )
  const page = await fixture.app.inject({ method: 'POST', url: new URL(answer.action).pathname, headers: FORM, payload: form(answer.fields) })
  assert.equal(page.statusCode, 200, page.body)
  return { body, answer, page }
}

/** Posts the bank page's form as a browser would: to its action, with its hidden fields. */
async function submit(fixture: Fixture, html: string, fields: { code?: string; decision: 'approve' | 'reject' }, headers: Record<string, string> = {}) {
  const { action, creq, tries } = challengeForm(html)
  return fixture.app.inject({ method: 'POST', url: new URL(action).pathname, headers: { ...FORM, ...headers }, payload: form({ creq, tries, code: fields.code ?? '', decision: fields.decision }) })
}

const wrongCode = (code: string) => (code === '000000' ? '111111' : '000000')

describe('3-D Secure challenge answers', () => {
  it('after a wrong code the page shows the error and posts its next answer to the same absolute URL; the right code then approves', async (t) => {
    const fixture = await clientFixture(t)
    const { body, page } = await openChallenge(fixture)
    const first = challengeForm(page.body)
    assert.equal(first.action, 'http://localhost:80/payments/tds/challenge/complete', 'absolute, so it does not move with the page URL')

    const wrong = await submit(fixture, page.body, { code: wrongCode(first.code), decision: 'approve' })
    assert.equal(wrong.statusCode, 200)
    assert.match(wrong.body, /role="alert">That code is not correct\. Type the six digits shown above \(2 attempts left\)\.</)
    assert.match(wrong.body, /aria-invalid="true"/)
    assert.doesNotMatch(wrong.body, /postMessage/)
    const again = challengeForm(wrong.body)
    assert.equal(again.action, first.action, 'the page after a wrong code posts where the first one did')
    assert.equal(again.code, first.code)

    const done = await submit(fixture, wrong.body, { code: first.code, decision: 'approve' })
    assert.equal(done.statusCode, 200, done.body)
    const final = await pay(fixture.app, { ...body, hints: frameHints(done.body) })
    const { authorizationId } = clientJson<{ authorizationId: string }>(final)
    assert.equal((await fixture.call('GET', `/transactions/${authorizationId}`)).json().transaction.tds, 'full')
  })

  it('fails the challenge cleanly at the third wrong code: the frame hands over a failure proof and the payment ends in TDSECURE_FAILED', async (t) => {
    const fixture = await clientFixture(t)
    const { body, page } = await openChallenge(fixture)
    const { code } = challengeForm(page.body)
    let html = page.body
    for (const left of ['2 attempts left', 'last attempt']) {
      const response = await submit(fixture, html, { code: wrongCode(code), decision: 'approve' })
      assert.match(response.body, new RegExp(`\\(${left}\\)`))
      html = response.body
    }
    const third = await submit(fixture, html, { code: wrongCode(code), decision: 'approve' })
    assert.equal(third.statusCode, 200)
    assert.match(third.body, /The code was wrong too many times/)
    const hints = frameHints(third.body)
    assert.match(hints[0], /^tds-challenge-failed\./)

    const final = await pay(fixture.app, { ...body, hints })
    const error = expectClientError(final, 'TDSECURE_FAILED')
    assert.equal(error.message, '3-D Secure failed: the one-time code was entered wrongly too many times.')
    assert.equal(final.headers['x-status-code'], 'TDSECURE_FAILED')
    assert.equal(clientJson<{ challenges?: unknown }>(await pay(fixture.app, { ...body, hints }, '/payments')).challenges, undefined, 'no loop back to the challenge')
  })

  it('refuses an edited count of wrong codes, and a fourth answer after the challenge failed', async (t) => {
    const fixture = await clientFixture(t)
    const { page } = await openChallenge(fixture)
    const { creq, tries, code } = challengeForm(page.body)
    const url = '/payments/tds/challenge/complete'
    const edited = await fixture.app.inject({ method: 'POST', url, headers: FORM, payload: form({ creq, tries: tries.replace(/^0\./, '1.'), code, decision: 'approve' }) })
    assert.equal(edited.statusCode, 400)
    assert.match(edited.body, /invalid or has expired/)
    const foreign = await openChallenge(fixture)
    const swapped = await fixture.app.inject({ method: 'POST', url, headers: FORM, payload: form({ creq, tries: challengeForm(foreign.page.body).tries, code, decision: 'approve' }) })
    assert.equal(swapped.statusCode, 400, 'a count signed for another challenge does not apply')
  })

  it('tells a cardholder who pressed Reject that they rejected it, not to retry later', async (t) => {
    const fixture = await clientFixture(t)
    const { body, page } = await openChallenge(fixture)
    const rejected = await submit(fixture, page.body, { decision: 'reject' })
    assert.match(rejected.body, /Payment not confirmed\./)
    const error = expectClientError(await pay(fixture.app, { ...body, hints: frameHints(rejected.body) }), 'TDSECURE_FAILED')
    assert.equal(error.message, '3-D Secure failed: the cardholder rejected the payment.')
    assert.doesNotMatch(String(error.message), /retry later/i)
  })

  it('formats the amount in the paying page’s language: DKK 12.34 is "12,34 kr." in Danish, even when the frame request asks for English', async (t) => {
    const fixture = await clientFixture(t)
    const dkk = { currency: 'DKK', exponent: 2, value: 1234 }
    const danish = await openChallenge(fixture, { amount: dkk, headers: { 'accept-language': 'da-DK' } })
    assert.match(danish.page.body, /<html lang="da">/)
    assert.match(danish.page.body, /data-testid="tds-amount">12,34\skr\.</)
    const wrong = await submit(fixture, danish.page.body, { code: wrongCode(challengeForm(danish.page.body).code), decision: 'approve' }, { 'accept-language': 'en' })
    assert.match(wrong.body, /Koden er forkert\. Skriv de seks cifre, der vises ovenfor \(2 forsøg tilbage\)\./)
    const english = await openChallenge(fixture, { amount: dkk, headers: { 'accept-language': 'en-GB' } })
    assert.match(english.page.body, /data-testid="tds-amount">DKK\s12\.34</)
    const yen = await openChallenge(fixture, { amount: { currency: 'JPY', exponent: 0, value: 500 } })
    assert.match(yen.page.body, /data-testid="tds-amount">JP¥500</)
  })
})
