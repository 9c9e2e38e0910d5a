import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, type TestContext } from 'node:test'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { createManualClock } from '../../../../src/core/clock.ts'
import { createManualScheduler } from '../../../../src/core/scheduler.ts'
import { chromiumSkipReason, launchChromium, openCheckedPage } from '../../../helpers/browser.ts'
import { authorize, merchantFixture } from '../helpers.ts'
import { startReceiver } from '../webhooks/receiver.ts'

// The merchant dashboard in Chromium against a real Triad socket on 127.0.0.1. Screenshots
// land in test-results/payments-dashboard/ (git-ignored; docs/payments-dashboard.md).
const ARTEFACTS = 'test-results/payments-dashboard'
export const STEP_TIMEOUT_MS = 15_000

let browser: Browser | undefined

/** One Chromium for the calling test file (with `extraArgs`), launched before its tests and closed after them. */
export function useBrowser(extraArgs: string[] = []) {
  before(async () => {
    if (chromiumSkipReason()) return
    mkdirSync(ARTEFACTS, { recursive: true })
    browser = await launchChromium(extraArgs)
  })
  after(() => browser?.close())
}

/** The browser has no DOM types here: what the page's `document` offers these tests. */
export interface PageDocument {
  activeElement: { id: string; getAttribute(name: string): string | null; tagName: string } | null
  documentElement: { scrollWidth: number; clientWidth: number }
}

/**
 * A test merchant with two transactions, served on its own socket; a webhook endpoint at a real
 * receiver on 127.0.0.1; the worker runs when the test says (`deliver`). The clock is a manual
 * one at the real time, so the session cookie's expiry means the same to the browser.
 */
export async function start(t: TestContext, contextOptions: BrowserContextOptions) {
  const clock = createManualClock(new Date())
  const scheduler = createManualScheduler(clock)
  const fixture = await merchantFixture(t, { clock, deps: { scheduler } })
  const receiver = await startReceiver(t)
  const hook = await fixture.call('POST', `/merchants/${fixture.merchant.id}/webhooks`, { url: receiver.url, events: ['*'] })
  assert.equal(hook.statusCode, 201, hook.body)
  const older = await authorize(fixture, fixture.merchant.id, { amount: 999, last4: '0005' })
  clock.advance(2000)
  const id = await authorize(fixture, fixture.merchant.id, { amount: 5000, last4: '4242', custom: { reference: 'order-4242' } })
  await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const address = fixture.app.server.address()
  assert.ok(address && typeof address === 'object')
  const base = `http://127.0.0.1:${address.port}`
  assert.ok(browser)
  const { page } = await openCheckedPage(t, browser, { context: contextOptions, stepTimeoutMs: STEP_TIMEOUT_MS })
  const deliver = async () => {
    clock.advance(1000)
    await scheduler.runDue()
  }
  return { ...fixture, base, page, id, older, receiver, deliver }
}

export const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTEFACTS}/${name}.png`, fullPage: true })

/** Presses Tab until the element with `id` has focus (keyboard only), at most `limit` times. */
export async function tabTo(page: Page, matches: (element: NonNullable<PageDocument['activeElement']>) => boolean, what: string, limit = 60) {
  for (let presses = 0; presses < limit; presses++) {
    await page.keyboard.press('Tab')
    const active = await page.evaluate(() => {
      const element = (globalThis as unknown as { document: PageDocument }).document.activeElement
      return element ? { id: element.id, label: element.getAttribute('aria-label'), text: (element as unknown as { textContent: string }).textContent, tag: element.tagName } : null
    })
    if (active && matches({ id: active.id, tagName: active.tag, getAttribute: (name) => (name === 'aria-label' ? active.label : null) })) return
  }
  assert.fail(`Tab never reached ${what}`)
}

