import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import type { TestContext } from 'node:test'
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core'

/** Debian's Chromium, as .ci/run installs it (or CHROMIUM_PATH). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']

/**
 * Why a browser suite is skipped, or false to run it. On a newcomer's machine without Chromium
 * `npm test` skips the browser suites; in CI (which installs Chromium) a missing browser is a
 * failure, never a silent skip.
 */
export function chromiumSkipReason(): string | false {
  if (existsSync(CHROMIUM)) return false
  if (process.env.CI) throw new Error(`CI is set but there is no Chromium at ${CHROMIUM}; .ci/run installs Debian's chromium`)
  return `no Chromium at ${CHROMIUM}`
}

/** Launches headless Chromium with the flags this machine needs, plus `extraArgs`. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extraArgs] })
}

/**
 * A page in a new context of `browser` (closed when the test ends) whose script errors fail the
 * test, and whose steps wait at most `stepTimeoutMs` (a loaded machine is slow, never stuck).
 */
export async function openCheckedPage(t: TestContext, browser: Browser, options: { context?: BrowserContextOptions; stepTimeoutMs: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options.context)
  t.after(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(options.stepTimeoutMs)
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  t.after(() => assert.deepEqual(errors, [], 'no script errors on the page'))
  return { context, page }
}
