import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { chromiumSkipReason, launchChromium, openCheckedPage } from '../../../helpers/browser.ts'
import { clientFixture } from '../client/helpers.ts'
import { parseList } from '../helpers.ts'

const ARTEFACTS = 'test-results/payments-pos'
const STEP_TIMEOUT_MS = 15_000

let browser: Browser | undefined

before(async () => {
  if (chromiumSkipReason()) return
  mkdirSync(ARTEFACTS, { recursive: true })
  browser = await launchChromium([
      ])
})
after(() => browser?.close())

/** A test merchant served on its own socket (127.0.0.1, port 0), and a fresh page. */
async function start(t: TestContext) {
  const fixture = await clientFixture(t)
  await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const address = fixture.app.server.address()
  assert.ok(address && typeof address === 'object')
  const base = `http://127.0.0.1:${address.port}`
  assert.ok(browser)
  const { page } = await openCheckedPage(t, browser, { context: { locale: 'en-GB' }, stepTimeoutMs: STEP_TIMEOUT_MS })
  return { ...fixture, base, page }
}

function linkOf(base: string, key: string, extra: Record<string, string>) {
  const query = new URLSearchParams({ key, test: '1', currency: 'EUR', redirect: `${base}/healthz?from=pos`, ...extra })
  return `${base}/pos?${query}`
}

async function fillCard(page: Page, number = '4111111111111111') {
  await page.getByLabel('Card number').pressSequentially(number)
  await page.getByLabel('Expiry date').pressSequentially('1230')
  await page.getByLabel('Security code').fill('123')
}

/** Waits for the redirect back to the shop and returns the transaction id it carries. */
async function transactionIdAfterRedirect(page: Page): Promise<string> {
  await page.waitForURL(/\/healthz\?from=pos&transactionId=/, { timeout: STEP_TIMEOUT_MS })
  const id = new URL(page.url()).searchParams.get('transactionId')
  assert.match(String(id), /^[0-9a-f]{24}$/)
  return String(id)
}

const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTEFACTS}/${name}.png`, fullPage: true })

describe('hosted payment page in Chromium', { skip: chromiumSkipReason() }, () => {
  it('pays on the happy path; the merchant API sees the transaction, captures it and the ledger line appears', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call, merchant } = await start(t)
    await page.goto(linkOf(base, key, { value: '1.95', text: 'Order 42', reference: 'o-42' }))
    assert.equal(await page.getByTestId('amount').textContent(), '€1.95')
    await page.getByLabel('Card number').pressSequentially('4111111111111111')
    assert.equal(await page.getByLabel('Card number').inputValue(), '4111 1111 1111 1111', 'grouped as typed')
    await page.getByLabel('Expiry date').pressSequentially('1230')
    assert.equal(await page.getByLabel('Expiry date').inputValue(), '12/30')
    await page.getByLabel('Security code').fill('123')
    await page.getByLabel('Test scenario').selectOption('frictionless')
    await shot(page, '1-happy-form')
    await page.getByRole('button', { name: 'Pay €1.95' }).click()
    await page.getByRole('heading', { name: 'Payment approved' }).waitFor()
    await shot(page, '1-happy-success')
    const id = await transactionIdAfterRedirect(page)

    const transaction = (await call('GET', `/transactions/${id}`)).json().transaction
    assert.equal(transaction.amount, 195)
    assert.equal(transaction.successful, true)
    assert.equal(transaction.card.last4, '1111')
    assert.deepEqual(transaction.custom, { reference: 'o-42' })
    const capture = await call('POST', `/transactions/${id}/captures`, { amount: 195, currency: 'EUR' })
    assert.equal(capture.statusCode, 201, capture.body)
    assert.equal(capture.json().transaction.capturedAmount, 195)
    const lines = parseList<{ transactionId: string; capture: boolean; amount: { currency: string; amount: number } }>(
      await call('GET', `/merchants/${merchant.id}/lines?limit=10`),
    )
    assert.equal(lines.length, 1)
    assert.equal(lines[0].transactionId, id)
    assert.equal(lines[0].capture, true)
    assert.deepEqual(lines[0].amount, { currency: 'EUR', amount: 195 })
  })

  it('pays through a 3-D Secure challenge in a frame: the code is typed and approved', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call } = await start(t)
    await page.goto(linkOf(base, key, { value: '20' }))
    await fillCard(page, '5555555555554444')
    await page.getByRole('button', { name: 'Pay €20.00' }).click()
    await page.getByRole('heading', { name: 'Confirm the payment with your bank' }).waitFor()
    const frame = page.frameLocator('#tds-frame iframe')
    const code = await frame.getByTestId('tds-code').textContent()
    assert.match(String(code), /^\d{6}$/)
    await frame.getByLabel('One-time code').fill(String(code))
    await shot(page, '2-tds-challenge')
    await frame.getByRole('button', { name: 'Approve' }).click()
    await page.getByRole('heading', { name: 'Payment approved' }).waitFor()
    const id = await transactionIdAfterRedirect(page)
    const transaction = (await call('GET', `/transactions/${id}`)).json().transaction
    assert.equal(transaction.tds, 'full')
    assert.equal(transaction.card.scheme, 'mastercard')
    assert.equal(transaction.amount, 2000)
  })

  it('shows inline errors, then a declined card on the failure screen, and lets the customer try again', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call, merchant } = await start(t)
    await page.goto(linkOf(base, key, { value: '5' }))
    await page.getByLabel('Card number').pressSequentially('4111111111111112')
    await page.getByLabel('Expiry date').pressSequentially('0120')
    await page.getByRole('button', { name: 'Pay €5.00' }).click()
    assert.equal(await page.getByLabel('Card number').getAttribute('aria-invalid'), 'true')
    assert.equal(await page.locator('#card-number-error').textContent(), 'Enter a valid card number.')
    assert.equal(await page.locator('#card-expiry-error').textContent(), 'This card has expired.')
    assert.equal(await page.locator('#card-code-error').textContent(), 'Enter the 3 or 4 digit security code.')
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id), 'card-number')
    await shot(page, '3-inline-errors')

    await page.getByLabel('Card number').fill('')
    await page.getByLabel('Expiry date').fill('')
    await fillCard(page)
    await page.getByLabel('Test scenario').selectOption('insufficient')
    await page.getByRole('button', { name: 'Pay €5.00' }).click()
    await page.getByRole('heading', { name: 'Payment not completed' }).waitFor()
    assert.equal(await page.getByTestId('failure').textContent(), 'The card has insufficient funds.')
    await shot(page, '3-declined')
    assert.equal(parseList(await call('GET', `/merchants/${merchant.id}/transactions?limit=10`)).length, 0, 'no authorization')

    await page.getByRole('button', { name: 'Try again' }).click()
    await page.getByLabel('Test scenario').selectOption('frictionless')
    await page.getByRole('button', { name: 'Pay €5.00' }).click()
    await page.getByRole('heading', { name: 'Payment approved' }).waitFor()
    await transactionIdAfterRedirect(page)
  })

  it('shows the failure screen when the cardholder rejects the 3-D Secure challenge, and a clear page for a bad link', { timeout: 60_000 }, async (t) => {
    const { page, base, key } = await start(t)
    await page.goto(linkOf(base, key, { value: '7.5' }))
    await fillCard(page)
    await page.getByRole('button', { name: 'Pay €7.50' }).click()
    await page.frameLocator('#tds-frame iframe').getByRole('button', { name: 'Reject' }).click()
    await page.getByRole('heading', { name: 'Payment not completed' }).waitFor()
    assert.equal(await page.getByTestId('failure').textContent(), 'The payment was not confirmed with your bank (3-D Secure).')
    await shot(page, '5-tds-rejected')

    const response = await page.goto(`${base}/pos?key=${key}&value=7.5`)
    assert.equal(response?.status(), 400)
    await page.getByRole('heading', { name: 'This payment link does not work' }).waitFor()
    assert.match(String(await page.getByTestId('error').textContent()), /must include test=1/)
    await shot(page, '5-bad-link')
  })

  it('takes the amount on the amount-entry screen when the link has none (Danish)', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call } = await start(t)
    await page.goto(linkOf(base, key, { locale: 'da' }))
    await page.getByLabel('Beløb i EUR').fill('12,555')
    await page.getByRole('button', { name: 'Fortsæt' }).click()
    assert.equal(await page.locator('#amount-input-error').textContent(), 'Angiv et beløb større end nul med højst 2 decimaler.')
    await page.getByLabel('Beløb i EUR').fill('12,5')
    assert.equal(await page.locator('#amount-input-error').isHidden(), true, 'the error goes once the amount is right')
    await shot(page, '4-amount-entry')
    await page.getByRole('button', { name: 'Fortsæt' }).click()
    assert.equal((await page.getByTestId('amount').textContent())?.replace(/\s/g, ' '), '12,50 €')
    await page.getByLabel('Kortnummer').pressSequentially('4111111111111111')
    await page.getByLabel('Udløbsdato').pressSequentially('1230')
    await page.getByLabel('Sikkerhedskode').fill('123')
    await page.getByLabel('Testscenarie').selectOption('frictionless')
    await page.getByRole('button', { name: /^Betal 12,50/ }).click()
    await page.getByRole('heading', { name: 'Betalingen er godkendt' }).waitFor()
    await shot(page, '4-amount-entry-success')
    const id = await transactionIdAfterRedirect(page)
    assert.equal((await call('GET', `/transactions/${id}`)).json().transaction.amount, 1250)
  })

  it('completes a challenged payment after a wrong code: the frame has the announced size, the bank page fits it, the code field has focus, MM/YY shows once', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call } = await start(t)
    await page.goto(linkOf(base, key, { value: '12.34' }))
    assert.equal(await page.getByText('MM/YY').count(), 1, 'the hint once')
    assert.equal(await page.getByLabel('Expiry date').getAttribute('placeholder'), null, 'no placeholder repeating it')
    await fillCard(page)
    await page.getByRole('button', { name: 'Pay €12.34' }).click()
    const element = await page.waitForSelector('#tds-frame iframe')
    assert.deepEqual([await element.getAttribute('width'), await element.getAttribute('height')], ['390', '400'])
    const frame = await element.contentFrame()
    assert.ok(frame)
    await frame.waitForSelector('#otp')
    await frame.waitForFunction(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id === 'otp')
    const code = String(await frame.getByTestId('tds-code').textContent())
    await frame.getByLabel('One-time code').fill(code === '000000' ? '111111' : '000000')
    await frame.getByRole('button', { name: 'Approve' }).click()
    await frame.getByText('That code is not correct. Type the six digits shown above (2 attempts left).').waitFor()
    const size = await frame.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; scrollHeight: number } } }).document.documentElement
      return [root.scrollWidth, root.scrollHeight]
    })
    assert.ok(size[0] <= 390 && size[1] <= 400, `the bank page (${size.join(' × ')}) fits 390 × 400 after a wrong code`)
    assert.equal(await page.getByRole('button', { name: 'Cancel and return to the shop' }).isVisible(), true, 'a way out during the challenge')
    await shot(page, '6-wrong-code')
    await frame.getByLabel('One-time code').fill(code)
    await frame.getByRole('button', { name: 'Approve' }).click()
    await page.getByRole('heading', { name: 'Payment approved' }).waitFor()
    const id = await transactionIdAfterRedirect(page)
    assert.equal((await call('GET', `/transactions/${id}`)).json().transaction.tds, 'full')
  })

  it('after three wrong codes shows a clean decline with Try again and Cancel; Cancel returns to the shop marked cancelled (Danish, amounts alike)', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call, merchant } = await start(t)
    await page.goto(linkOf(base, key, { value: '12,34', currency: 'DKK', locale: 'da' }))
    assert.equal((await page.getByTestId('amount').textContent())?.replace(/\s/g, ' '), '12,34 kr.')
    await page.getByLabel('Kortnummer').pressSequentially('4111111111111111')
    await page.getByLabel('Udløbsdato').pressSequentially('1230')
    await page.getByLabel('Sikkerhedskode').fill('123')
    await page.getByRole('button', { name: /^Betal 12,34/ }).click()
    const frame = page.frameLocator('#tds-frame iframe')
    assert.equal((await frame.getByTestId('tds-amount').textContent())?.replace(/\s/g, ' '), '12,34 kr.', 'the frame writes the amount as the page does')
    const code = String(await frame.getByTestId('tds-code').textContent())
    for (const left of ['2 forsøg tilbage', 'sidste forsøg']) {
      await frame.getByLabel('Engangskode').fill(code === '000000' ? '111111' : '000000')
      await frame.getByRole('button', { name: 'Godkend' }).click()
      await frame.getByText(new RegExp(`\\(${left}\\)`)).waitFor()
    }
    await frame.getByLabel('Engangskode').fill(code === '000000' ? '111111' : '000000')
    await frame.getByRole('button', { name: 'Godkend' }).click()
    await page.getByRole('heading', { name: 'Betalingen blev ikke gennemført' }).waitFor()
    assert.equal(await page.getByTestId('failure').textContent(), 'Betalingen blev ikke bekræftet hos din bank (3-D Secure).')
    assert.equal(await page.getByRole('button', { name: 'Prøv igen' }).isVisible(), true)
    await shot(page, '7-three-wrong-codes')
    await page.getByRole('button', { name: 'Annullér og gå tilbage til butikken' }).click()
    await page.waitForURL(/\/healthz\?from=pos&cancelled=1$/)
    assert.equal(parseList(await call('GET', `/merchants/${merchant.id}/transactions?limit=10`)).length, 0, 'no authorization')
  })

  it('offers Cancel on every screen: amount entry, card form, mid-challenge (nothing is paid), and goes back when the link has no redirect', { timeout: 60_000 }, async (t) => {
    const { page, base, key, call, merchant } = await start(t)
    const cancel = page.getByRole('button', { name: 'Cancel and return to the shop' })
    await page.goto(linkOf(base, key, {}))
    await cancel.click()
    await page.waitForURL(/\/healthz\?from=pos&cancelled=1$/)

    await page.goto(linkOf(base, key, {}))
    await page.getByLabel('Amount in EUR').fill('3')
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByLabel('Card number').waitFor()
    await cancel.click()
    await page.waitForURL(/\/healthz\?from=pos&cancelled=1$/)

    await page.goto(linkOf(base, key, { value: '4' }))
    await fillCard(page)
    await page.getByRole('button', { name: 'Pay €4.00' }).click()
    await page.frameLocator('#tds-frame iframe').getByTestId('tds-code').waitFor()
    await cancel.click()
    await page.waitForURL(/\/healthz\?from=pos&cancelled=1$/)
    assert.equal(parseList(await call('GET', `/merchants/${merchant.id}/transactions?limit=10`)).length, 0, 'cancelled mid-challenge: nothing authorized')

    const shop = `${base}/healthz?from=shop`
    await page.goto(shop)
    const query = new URLSearchParams({ key, test: '1', currency: 'EUR', value: '5' })
    await page.goto(`${base}/pos?${query}`)
    await page.getByRole('button', { name: 'Cancel and go back' }).click()
    await page.waitForURL(shop)
  })
})
