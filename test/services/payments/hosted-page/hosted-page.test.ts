import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createMerchant } from '../helpers.ts'
import { clientFixture } from '../client/helpers.ts'

const visible = (html: string, id: string) => new RegExp(`<section id="${id}"[^>]*>`).exec(html)?.[0].includes('hidden') === false

describe('GET /pos (hosted payment page)', () => {
  it('renders the payment form with the merchant, the amount (server-side) and the text', async (t) => {
    const fixture = await clientFixture(t)
    const url = `/pos?key=${fixture.key}&test=1&currency=EUR&value=1.95&reference=o1&text=${encodeURIComponent('Coffee <b>beans</b>')}`
    const response = await fixture.app.inject({ method: 'GET', url })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^text\/html/)
    assert.match(String(response.headers['content-security-policy']), /script-src 'self'/)
    const html = response.body
    assert.match(html, /<html lang="en">/)
    assert.match(html, /data-testid="amount">€1\.95</)
    assert.match(html, /<h1 id="merchant">Coffee &#38; John<\/h1>/)
    assert.match(html, /Coffee &#60;b&#62;beans&#60;\/b&#62;/, 'the text is escaped')
    assert.match(html, /Pay €1\.95/)
    assert.match(html, /<label for="card-number">Card number<\/label>/)
    assert.match(html, /autocomplete="cc-number"/)
    assert.match(html, /Test mode/)
    assert.ok(visible(html, 'screen-card') && !visible(html, 'screen-amount'))
    const config = JSON.parse(/<script type="application\/json" id="pos-config">(.*?)<\/script>/s.exec(html)?.[1] ?? '{}')
    assert.equal(config.amount, 195)
    assert.equal(config.exponent, 2)
    assert.equal(config.reference, 'o1')
    assert.equal(config.key, fixture.key)
  })

  it('shows the amount-entry screen first when the link has no value', async (t) => {
    const fixture = await clientFixture(t)
    const html = (await fixture.app.inject({ method: 'GET', url: `/pos?key=${fixture.key}&test=1&currency=DKK` })).body
    assert.ok(visible(html, 'screen-amount') && !visible(html, 'screen-card'))
    assert.match(html, /Amount in DKK/)
  })

  it('speaks Danish for locale da / da_DK, with Danish amounts', async (t) => {
    const fixture = await clientFixture(t)
    for (const locale of ['da', 'da_DK', 'da-DK']) {
      const html = (await fixture.app.inject({ method: 'GET', url: `/pos?key=${fixture.key}&test=1&value=1.95&locale=${locale}&recurring=y` })).body
      assert.match(html, /<html lang="da">/)
      assert.match(html, /Kortnummer/)
      assert.match(html, /1,95\s€/)
      assert.match(html, /Dit kort bliver gemt/)
    }
    const fromBrowser = await fixture.app.inject({
      method: 'GET',
      url: `/pos?key=${fixture.key}&test=1&value=5`,
      headers: { 'accept-language': 'da-DK,da;q=0.9' },
    })
    assert.match(fromBrowser.body, /Betal/)
    const english = await fixture.app.inject({ method: 'GET', url: `/pos?key=${fixture.key}&test=1&value=5&locale=en_US` })
    assert.match(english.body, /Pay €5\.00/)
  })

  it('explains bad links on a clear error page (never JSON, never a stack trace)', async (t) => {
    const fixture = await clientFixture(t)
    const live = await createMerchant(fixture.app, fixture.owner.key, { test: false })
    const cases: Array<[string, number, RegExp]> = [
      ['/pos', 400, /no merchant key/],
      ['/pos?key=nope', 404, /shop we do not know/],
      ['/pos?key=00000000-0000-4000-8000-000000000000&test=1', 404, /shop we do not know/],
      [`/pos?key=${fixture.key}&value=1`, 400, /test shop, so its payment links must include test=1/],
      [`/pos?key=${live.key}&test=1&value=1`, 400, /takes real payments/],
      [`/pos?key=${fixture.key}&test=1&value=1.955`, 400, /amount of this link is not valid/],
      [`/pos?key=${fixture.key}&test=1&value=-1`, 400, /amount of this link is not valid/],
      [`/pos?key=${fixture.key}&test=1&currency=XYZ&value=1`, 400, /currency of this link is not supported/],
      [`/pos?key=${fixture.key}&test=1&value=1&redirect=javascript:alert(1)`, 400, /return address/],
      [`/pos?key=${fixture.key}&key=${fixture.key}&test=1`, 400, /not valid/],
    ]
    for (const [url, status, message] of cases) {
      const response = await fixture.app.inject({ method: 'GET', url })
      assert.equal(response.statusCode, status, url)
      assert.match(String(response.headers['content-type']), /^text\/html/, url)
      assert.match(response.body, message, url)
      assert.doesNotMatch(response.body, /at .*\.ts:\d+/)
    }
    const danish = await fixture.app.inject({ method: 'GET', url: `/pos?key=${fixture.key}&locale=da` })
    assert.match(danish.body, /Dette betalingslink virker ikke/)
  })

  it('serves its script and styles without credentials', async (t) => {
    const fixture = await clientFixture(t)
    const script = await fixture.app.inject({ method: 'GET', url: '/pos/assets/pos.js' })
    assert.equal(script.statusCode, 200)
    assert.match(String(script.headers['content-type']), /javascript/)
    assert.match(script.body, /\/vault/)
    const styles = await fixture.app.inject({ method: 'GET', url: '/pos/assets/pos.css' })
    assert.equal(styles.statusCode, 200)
    assert.match(String(styles.headers['content-type']), /text\/css/)
    assert.equal((await fixture.app.inject({ method: 'GET', url: '/pos/assets/../app.ts' })).statusCode, 404)
  })
})
