import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { createServer } from 'node:http'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { Browser, Frame, Page } from 'playwright-core'
import { chromiumSkipReason, launchChromium } from '../../../helpers/browser.ts'
import { bundleCommonJs } from '../../../helpers/cjs-bundle.ts'
import { clientFixture } from './helpers.ts'

// Paylike's client flow in Chromium, on a shop of its own origin (a second local server, as a
// merchant's site is never Triad's origin): Paylike's request library (@paylike/request, what @paylike/client wraps) does every
// call, and the page runs the challenge loop the way Paylike's js-client and its example client
// do: the same body again with the hints appended, frames posted by a form into a fixed
// 390 × 400 iframe, hints taken from the frame's postMessage. Triad serves the API on 127.0.0.1.

const ARTEFACTS = 'test-results/payments-js-client'
const STEP_TIMEOUT_MS = 15_000

const HARNESS = `<!doctype html><html><head><meta charset="utf-8"><title>Shop checkout</title>
<script src="/paylike-request.js"></script></head><body><h1>Checkout</h1><p id="result">paying…</p><script>
var api = new URLSearchParams(location.search).get('api')
var request = window.paylikeRequest
var frames = new Set()
window.addEventListener('message', function (event) {
  frames.forEach(function (frame) {
    if (frame.contentWindow === event.source && event.data && Array.isArray(event.data.hints)) frame.done(event.data.hints)
  })
})
function call(path, data) {
  return request(api + path, { version: 1, data: data, clientId: 'js-c-1', fetch: window.fetch.bind(window), timeout: 10000 }).first()
}
function frameChallenge(answer, hidden) {
  return new Promise(function (resolve) {
    var frame = document.createElement('iframe')
    frame.name = 'challenge-frame'
    frame.style.cssText = 'border:none;width:390px;height:400px;display:' + (hidden ? 'none' : 'block')
    var timer = answer.timeout === undefined ? undefined : setTimeout(function () { frame.done([]) }, answer.timeout)
    frame.done = function (hints) {
      clearTimeout(timer)
      frames.delete(frame)
      frame.remove()
      resolve(hints)
    }
    var form = document.createElement('form')
    form.method = 'POST'
    form.action = answer.action
    form.target = frame.name
    Object.keys(answer.fields || {}).forEach(function (name) {
      var input = document.createElement('input')
      input.type = 'hidden'
      input.name = name
      input.value = answer.fields[name]
      form.appendChild(input)
    })
    frames.add(frame)
    document.body.appendChild(frame)
    document.body.appendChild(form)
    form.submit()
    form.remove()
  })
}
function pay(payment, hints) {
  return call('/payments', Object.assign({}, payment, { hints: hints })).then(function (response) {
    if (response.authorizationId) return response.authorizationId
    var challenge = response.challenges[0]
    return call(challenge.path, Object.assign({}, payment, { hints: hints })).then(function (answer) {
      var more = answer.hints || []
      if (challenge.type === 'fetch') return pay(payment, hints.concat(more))
      return frameChallenge(answer, challenge.type === 'background-iframe').then(function (fromFrame) {
        return pay(payment, hints.concat(more, fromFrame))
      })
    })
  })
}
window.payment = Promise.all([call('/vault', { type: 'pcn', value: '4111111111111111' }), call('/vault', { type: 'pcsc', value: '123' })])
  .then(function (tokens) {
    var query = new URLSearchParams(location.search)
    return pay({
      test: {},
      integration: { key: query.get('key') },
      amount: { currency: query.get('currency'), exponent: 2, value: Number(query.get('value')) },
      card: { number: tokens[0], code: tokens[1], expiry: { month: 12, year: 2030 } },
    }, [])
  })
  .then(function (id) {
    document.getElementById('result').textContent = 'Approved: ' + id
    return { id: id }
  }, function (error) {
    document.getElementById('result').textContent = 'Declined: ' + error.message
    return { code: error.code, message: error.message }
  })
</script></body></html>`

let browser: Browser | undefined
let bundle = ''

before(async () => {
  if (chromiumSkipReason()) return
  mkdirSync(ARTEFACTS, { recursive: true })
  bundle = bundleCommonJs('@paylike/request', 'paylikeRequest')
  browser = await launchChromium()
})
after(() => browser?.close())

/** Triad on its own socket, and the shop's checkout page (another origin) in a fresh context. */
async function start(t: TestContext, locale: string, amount: { currency: string; value: number }) {
  // After-hooks run in the order they were added: the browser goes first, so Triad does not
  // wait out its keep-alive connections when it closes.
  assert.ok(browser)
  const context = await browser.newContext({ locale })
  t.after(() => context.close())
  const fixture = await clientFixture(t)
  await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const address = fixture.app.server.address()
  assert.ok(address && typeof address === 'object')
  const api = `http://127.0.0.1:${address.port}`
  const shop = createServer((request, response) => {
    const script = request.url === '/paylike-request.js'
    response.writeHead(200, { 'content-type': script ? 'text/javascript' : 'text/html; charset=utf-8' }).end(script ? bundle : HARNESS)
  })
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    shop.closeAllConnections()
    return new Promise<void>((resolve) => shop.close(() => resolve()))
  })
  const shopAddress = shop.address()
  assert.ok(shopAddress && typeof shopAddress === 'object')
  const page = await context.newPage()
  page.setDefaultTimeout(STEP_TIMEOUT_MS)
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => process.env.DEBUG_BROWSER && console.log('page:', message.text()))
  t.after(() => assert.deepEqual(errors, [], 'no script errors on the page'))
  const query = new URLSearchParams({ api, key: fixture.key, currency: amount.currency, value: String(amount.value) })
  await page.goto(`http://localhost:${shopAddress.port}/checkout?${query}`)
  return { ...fixture, page }
}

/** The bank's page in the visible challenge frame, once it has loaded. */
async function bankFrame(page: Page): Promise<Frame> {
  const element = await page.waitForSelector('iframe[name="challenge-frame"]:visible')
  const frame = await element.contentFrame()
  assert.ok(frame)
  await frame.waitForSelector('#otp')
  return frame
}

/** The bank page fits the 390 × 400 frame the challenge announced: nothing to scroll to. */
async function assertFits(frame: Frame, what: string) {
  const size = await frame.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; scrollHeight: number; clientWidth: number; clientHeight: number } } })
      .document.documentElement
    return { width: root.scrollWidth, height: root.scrollHeight, frameWidth: root.clientWidth, frameHeight: root.clientHeight }
  })
  assert.equal(size.frameWidth, 390, what)
  assert.equal(size.frameHeight, 400, what)
  assert.ok(size.width <= 390 && size.height <= 400, `${what}: the page is ${size.width} × ${size.height}, the frame 390 × 400`)
}

async function result(page: Page) {
  return page.evaluate(() => (globalThis as unknown as { payment: Promise<{ id?: string; code?: string; message?: string }> }).payment)
}

const wrong = (code: string) => (code === '000000' ? '111111' : '000000')

describe("Paylike's client flow in Chromium", { skip: chromiumSkipReason() }, () => {
  it('completes a challenged payment after a wrong one-time code; the bank page fits its frame before and after the error', { timeout: 60_000 }, async (t) => {
    const { page, call } = await start(t, 'en-GB', { currency: 'EUR', value: 1995 })
    const frame = await bankFrame(page)
    await assertFits(frame, 'English challenge')
    assert.equal(await frame.getByTestId('tds-amount').textContent(), '€19.95')
    const code = String(await frame.getByTestId('tds-code').textContent())
    await frame.getByLabel('One-time code').fill(wrong(code))
    await frame.getByRole('button', { name: 'Approve' }).click()
    await frame.getByText('That code is not correct. Type the six digits shown above (2 attempts left).').waitFor()
    await assertFits(frame, 'English challenge after a wrong code')
    await page.screenshot({ path: `${ARTEFACTS}/1-wrong-code.png` })
    await frame.getByLabel('One-time code').fill(code)
    await frame.getByRole('button', { name: 'Approve' }).click()
    const outcome = await result(page)
    assert.match(String(outcome.id), /^[0-9a-f]{24}$/, JSON.stringify(outcome))
    const transaction = (await call('GET', `/transactions/${outcome.id}`)).json().transaction
    assert.equal(transaction.tds, 'full')
    assert.equal(transaction.amount, 1995)
  })

  it('ends in a decline the shop can show after three wrong codes (Danish bank page, amounts as the page writes them)', { timeout: 60_000 }, async (t) => {
    const { page, merchant, call } = await start(t, 'da-DK', { currency: 'DKK', value: 1234 })
    const frame = await bankFrame(page)
    assert.equal(await frame.evaluate(() => (globalThis as unknown as { document: { documentElement: { lang: string } } }).document.documentElement.lang), 'da')
    assert.equal((await frame.getByTestId('tds-amount').textContent())?.replace(/\s/g, ' '), '12,34 kr.')
    await assertFits(frame, 'Danish challenge')
    const code = String(await frame.getByTestId('tds-code').textContent())
    for (const message of ['Koden er forkert. Skriv de seks cifre, der vises ovenfor (2 forsøg tilbage).', 'Koden er forkert. Skriv de seks cifre, der vises ovenfor (sidste forsøg).']) {
      await frame.getByLabel('Engangskode').fill(wrong(code))
      await frame.getByRole('button', { name: 'Godkend' }).click()
      await frame.getByText(message).waitFor()
      await assertFits(frame, `Danish challenge: ${message}`)
    }
    await page.screenshot({ path: `${ARTEFACTS}/2-last-attempt-da.png` })
    await frame.getByLabel('Engangskode').fill(wrong(code))
    await frame.getByRole('button', { name: 'Godkend' }).click()
    const outcome = await result(page)
    assert.deepEqual(outcome, { code: 'TDSECURE_FAILED', message: '3-D Secure failed: the one-time code was entered wrongly too many times.' })
    assert.equal(await page.locator('#result').textContent(), 'Declined: 3-D Secure failed: the one-time code was entered wrongly too many times.')
    assert.equal(await page.locator('iframe').count(), 0, 'the frame is gone')
    const list = await call('GET', `/merchants/${merchant.id}/transactions?limit=10`)
    assert.equal(list.body.trim(), '[\n]', 'no authorization')
  })
})
