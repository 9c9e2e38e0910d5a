import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

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
