import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chromiumSkipReason } from '../../../helpers/browser.ts'
import { parseList, paymentsCli } from '../helpers.ts'
import { type PageDocument, shot, start, STEP_TIMEOUT_MS, tabTo, useBrowser } from './dashboard-page.ts'

// The merchant dashboard in Chromium against a real Triad socket on 127.0.0.1 (the helpers:
// dashboard-page.ts). Screenshots land in test-results/payments-dashboard/.
useBrowser()

describe('merchant dashboard in Chromium', { skip: chromiumSkipReason() }, () => {
  it('signs in, finds a transaction, captures part of it, refunds part, and shows the ledger line and the webhook delivery', { timeout: 60_000 }, async (t) => {
    const { page, base, id, older, owner, merchant, deliver, receiver, call, app } = await start(t, { locale: 'en-GB', viewport: { width: 1280, height: 900 } })
    await page.goto(`${base}/dashboard`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.getByLabel('API key').fill('not the key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.locator('#sign-in-error').getByText('This API key is not known. Check it and try again.').waitFor()
    await page.getByLabel('API key').fill(owner.key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Volume' }).waitFor()
    assert.equal(await page.evaluate(() => (globalThis as unknown as { localStorage: { length: number } }).localStorage.length), 0, 'nothing in localStorage')
    const cookies = await page.context().cookies()
    assert.equal(cookies.length, 1)
    assert.equal(cookies[0].httpOnly, true)
    assert.equal(cookies[0].sameSite, 'Strict')
    assert.ok(!cookies[0].value.includes(owner.key))

    // Today's volume: both authorizations, in the table and drawn as a chart.
    await page.locator('#volume-table tbody td').first().waitFor()
    const volumeRow = page.locator('#volume-table tbody tr').first()
    assert.deepEqual(await volumeRow.locator('td').allTextContents(), ['EUR', '€59.99', '€59.99', '€0.00', '€0.00', '2'])
    assert.match(String(await page.locator('#volume-charts svg').getAttribute('aria-label')), /^EUR: authorized amount per day, .* Period total €59\.99, today €59\.99\.$/)
    assert.equal(await page.locator('#volume-charts svg rect').count(), 30)
    await page.locator('#tx-table tbody tr').nth(1).waitFor()
    await shot(page, '1-signed-in')

    // Find it by its card's last 4 digits.
    await page.getByLabel('Card last 4').fill('4242')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await page.locator('#results').getByText('Transactions shown: 1.').waitFor()
    assert.equal(await page.locator('#tx-table tbody tr').count(), 1)
    assert.equal(await page.getByRole('button', { name: `Open transaction ${older}` }).count(), 0)
    await page.getByRole('button', { name: `Open transaction ${id}` }).click()
    await page.getByRole('heading', { name: `Transaction ${id}` }).waitFor()
    assert.equal(await page.locator('#detail-summary').getByText('Authenticated (full)').count(), 1, 'the 3-D Secure outcome')

    // Capture €20.00 of €50.00, after confirming.
    await page.getByRole('button', { name: 'Capture', exact: true }).click()
    assert.equal(await page.getByLabel('Amount in EUR').inputValue(), '50.00', 'the most that can be captured')
    await page.getByLabel('Amount in EUR').fill('60')
    await page.getByRole('button', { name: 'Confirm capture' }).click()
    await page.locator('#confirm-error').getByText('Enter an amount greater than zero and at most €50.00, with at most 2 decimals.').waitFor()
    await page.getByLabel('Amount in EUR').fill('20')
    await shot(page, '2-confirm-capture')
    await page.getByRole('button', { name: 'Confirm capture' }).click()
    await page.locator('#live').getByText('Captured €20.00.').waitFor()
    let transaction = (await call('GET', `/transactions/${id}`)).json().transaction
    assert.equal(transaction.capturedAmount, 2000)

    // Refund €5.00 of the €20.00 captured.
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    assert.equal(await page.getByLabel('Amount in EUR').inputValue(), '20.00')
    await page.getByLabel('Amount in EUR').fill('5')
    await page.getByRole('button', { name: 'Confirm refund' }).click()
    await page.locator('#live').getByText('Refunded €5.00.').waitFor()
    transaction = (await call('GET', `/transactions/${id}`)).json().transaction
    assert.equal(transaction.refundedAmount, 500)
    assert.deepEqual(await page.locator('#trail-table tbody tr td:first-child').allTextContents(), ['Authorization', 'Capture', 'Refund'])

    // The ledger lines the two movements wrote, as GET /lines/{id} has them.
    const lineIds = transaction.trail.map((entry: { lineId: string }) => entry.lineId)
    await page.locator('#lines-table tbody tr').nth(1).waitFor()
    assert.deepEqual(await page.locator('#lines-table tbody tr td:first-child').allTextContents(), lineIds)
    const captureLine = (await call('GET', `/lines/${lineIds[0]}`)).json().line
    assert.equal(await page.locator('#lines-table tbody tr').first().locator('td').nth(2).textContent(), `€${(captureLine.balance / 100).toFixed(2)}`)

    await page.locator('#deliveries-table tbody tr td').getByText('transaction.refunded').waitFor()
    // The webhook deliveries: sent by the worker, then seen on the transaction's trail. A round
    // the movements' events started may still be recording its answers when `deliver` returns.
    await deliver()
    const settled = async () => {
      const listed = parseList<{ deliveries: Array<{ status: string }> }>(await call('GET', `/merchants/${merchant.id}/events?limit=10&filter[transactionId]=${id}`))
      return listed.length === 3 && listed.every((event) => event.deliveries.every((delivery) => delivery.status === 'delivered'))
    }
    for (const deadline = Date.now() + STEP_TIMEOUT_MS; Date.now() < deadline && !(await settled()); ) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      await deliver()
    }
    assert.ok(await settled(), 'the three events of the transaction are delivered')
    assert.deepEqual(receiver.types().sort(), ['transaction.authorized', 'transaction.authorized', 'transaction.captured', 'transaction.refunded'])
    await page.getByRole('button', { name: 'Back to the list' }).click()
    await page.getByRole('button', { name: `Open transaction ${id}` }).click()
    await page.locator('#deliveries-table tbody tr').nth(2).waitFor()
    const deliveries = page.locator('#deliveries-table tbody tr')
    assert.deepEqual(await deliveries.locator('td:first-child').allTextContents(), ['transaction.refunded', 'transaction.captured', 'transaction.authorized'])
    for (const row of await deliveries.all()) {
      assert.equal(await row.locator('td').nth(2).textContent(), receiver.url)
      assert.equal(await row.locator('td').nth(3).textContent(), 'delivered')
      assert.match(String(await row.locator('td').nth(5).textContent()), /^HTTP 200 · \d+ ms$/)
    }
    assert.match(String(await page.locator('#endpoints-table tbody tr td').first().textContent()), /^http:\/\/127\.0\.0\.1:\d+\/hooks$/)
    await shot(page, '3-trail-lines-deliveries')

    // Sign out: the cookie is gone, and the session it held is refused by the API.
    const [held] = await page.context().cookies()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    assert.deepEqual(await page.context().cookies(), [])
    const replayed = await app.inject({ url: `/merchants/${merchant.id}`, headers: { cookie: `${held.name}=${held.value}` } })
    assert.equal(replayed.statusCode, 401)
  })

  it('in Danish on a phone, by keyboard only: signs in, opens a transaction and voids part of it, with focus always visible', { timeout: 60_000 }, async (t) => {
    const fixture = await start(t, { locale: 'da-DK', viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true })
    const { page, base, id, older, owner, call } = fixture
    // The card network's side (test mode: the operator's CLI): a dispute and a fraud alert on the older payment.
    assert.equal((await call('POST', `/transactions/${older}/captures`, { amount: 999 })).statusCode, 201)
    for (const argv of [['dispute', 'open', older, '--amount', '500', '--reason', '4'], ['fraud', 'report', older, '--reason', '1']]) {
      const result = await paymentsCli(fixture, ...argv)
      assert.equal(result.code, 0, result.err)
    }
    await page.goto(`${base}/dashboard`)
    await page.getByRole('heading', { name: 'Log ind' }).waitFor()
    assert.equal(await page.locator('html').getAttribute('lang'), 'da')
    assert.equal(await page.title(), 'Forhandleroversigt – Triad Payments')
    // The e-mail field (merchant users) has focus on arrival; the key field (operators) is a Tab away; typing and Enter sign in.
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === 'email')
    await tabTo(page, (element) => element.id === 'api-key', 'the API key field')
    await page.keyboard.type(owner.key)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Omsætning' }).waitFor()
    await page.locator('#tx-table tbody tr').nth(1).waitFor()
    assert.equal(await page.locator('#volume-table tbody tr td').nth(2).textContent().then((text) => text?.replace(/\s/g, ' ')), '59,99 €')
    await page.locator('#frauds-table tbody tr td').first().waitFor()
    const dispute = await page.locator('#disputes-table tbody tr').first().locator('td').allTextContents()
    assert.equal(dispute.length, 5)
    assert.equal(dispute[1], older.slice(-8))
    assert.equal(dispute[2].replace(/\s/g, ' '), '5,00 €', 'in the currency of its transaction')
    assert.equal(await page.locator('#frauds-table tbody tr').count(), 1)
    assert.equal(await page.locator('#frauds-table tbody tr td').nth(1).textContent(), older.slice(-8))
    const noOverflow = await page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.documentElement.scrollWidth <= (globalThis as unknown as { document: PageDocument }).document.documentElement.clientWidth)
    assert.ok(noOverflow, 'nothing wider than the phone screen')
    await shot(page, '4-da-phone-signed-in')

    await tabTo(page, (element) => element.getAttribute('aria-label') === `Åbn transaktion ${id}`, 'the open button of the transaction')
    const outline = await page.evaluate(() => {
      const active = (globalThis as unknown as { document: PageDocument }).document.activeElement as unknown
      const style = (globalThis as unknown as { getComputedStyle(element: unknown): { outlineStyle: string; outlineWidth: string } }).getComputedStyle(active)
      return `${style.outlineStyle} ${style.outlineWidth}`
    })
    assert.equal(outline, 'solid 3px', 'a visible focus ring')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: `Transaktion ${id}` }).waitFor()
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === 'detail-title')
    await tabTo(page, (element) => element.id === 'do-void', 'the void button')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === 'confirm-amount')
    assert.equal(await page.getByLabel('Beløb i EUR').inputValue(), '50,00')
    await page.keyboard.press('Escape')
    await page.waitForFunction(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id === 'do-void')
    assert.equal(await page.locator('#confirm').isHidden(), true, 'Escape cancels')
    await page.keyboard.press('Enter')
    await page.keyboard.type('12,50')
    await shot(page, '5-da-phone-confirm-void')
    await page.keyboard.press('Enter')
    await page.locator('#live').getByText(/^12,50\s€ er annulleret\.$/).waitFor()
    const transaction = (await call('GET', `/transactions/${id}`)).json().transaction
    assert.equal(transaction.voidedAmount, 1250)
    assert.equal(await page.locator('#detail-summary .status').textContent(), 'Godkendt', 'the rest can still be captured')
    assert.deepEqual(await page.locator('#trail-table tbody tr td:first-child').allTextContents(), ['Godkendelse', 'Annullering'])
    await shot(page, '6-da-phone-voided')
  })
})
