// The avatar page in voice mode in Chromium with a fake microphone that speaks recordings: for
// the browser test (voice.browser.test.ts) and bench/avatar-voice-browser.ts.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { decodeWav, encodeWav16, resample } from '../../../../src/services/avatar/providers/asr/wav-decode.ts'
import { launchChromium } from '../../../helpers/browser.ts'

const RATE = 16_000

/** Debian's pocketsphinx-testdata: LibriVox sentences with their transcripts. */
export const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox'

/** The recordings of pocketsphinx-testdata's LibriVox set and the words said in each. */
export function librivoxRecordings(): Array<{ file: string; words: string[] }> {
  return readFileSync(join(LIBRIVOX, 'transcription'), 'utf8')
    .split('\n')
    .map((line) => /^<s>(.*)<\/s>\s*\((.+)\)$/.exec(line.trim()))
    .filter((match) => match !== null)
    .map((match) => ({ file: join(LIBRIVOX, `${match[2]}.wav`), words: match[1].trim().split(/\s+/) }))
}

/**
 * A WAV for Chromium's fake microphone: the recordings one after another, `leadSeconds` of
 * silence before the first (Chromium drops what plays before the page connects its source),
 * `gapSeconds` between them and after the last (it repeats the last 10 ms after `%noloop`).
 */
export function fakeMicrophoneWav(files: string[], path: string, options: { leadSeconds: number; gapSeconds: number }): string {
  const parts: Float32Array[] = [new Float32Array(options.leadSeconds * RATE)]
  for (const file of files) {
    const decoded = decodeWav(readFileSync(file))
    if (!decoded) throw new Error(`not a WAV: ${file}`)
    parts.push(resample(decoded, RATE), new Float32Array(options.gapSeconds * RATE))
  }
  const samples = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    samples.set(part, offset)
    offset += part.length
  }
  writeFileSync(path, encodeWav16(samples, RATE))
  return path
}

/** Chromium whose microphone plays `wav` once, with no permission prompt, and audio that plays unprompted. */
export function launchWithMicrophone(wav: string): Promise<Browser> {
  return launchChromium([
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-audio-capture=${wav}%noloop`,
    '--autoplay-policy=no-user-gesture-required',
  ])
}

/** One turn as the page measured it, in seconds on its AudioContext's clock (voice.js). */
export interface PageTurn {
  speechEnd: number
  endOfTurn: number
  transcript: number
  firstToken: number
  audioArrived: number
  playStart: number
  text: string
}

// The DOM as the callbacks that run in the page use it (this project compiles against Node's types).
interface Dom {
  document: { querySelector(selector: string): { textContent: string | null; dataset: Record<string, string | undefined> } | null; body: { dataset: Record<string, string | undefined> } }
  window: { voiceTurns?: PageTurn[] }
}

/** Opens the page and turns hands-free voice mode on, with `endOfTurnMs`. */
export async function startTalking(browser: Browser, base: string, endOfTurnMs: number): Promise<Page> {
  const context = await browser.newContext()
  await context.grantPermissions(['microphone'], { origin: base })
  const page = await context.newPage()
  await page.goto(`${base}/avatar`)
  await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#status')?.textContent?.startsWith('Ready'))
  await page.evaluate((ms) => {
    ;(globalThis as unknown as Dom).document.body.dataset.endOfTurnMs = String(ms)
  }, endOfTurnMs)
  await page.click('#talk')
  return page
}

/** The turns the page has measured once it has `count` (bounded by `timeoutMs`). */
export async function pageTurns(page: Page, count: number, timeoutMs: number): Promise<PageTurn[]> {
  // A turn is pushed at `done`; its first sentence is scheduled once decoded, maybe just after.
  await page.waitForFunction(
    (wanted) => {
      const turns = (globalThis as unknown as Dom).window.voiceTurns ?? []
      return turns.length >= wanted && turns.every((turn) => turn.playStart !== undefined)
    },
    count,
    { timeout: timeoutMs },
  )
  return page.evaluate(() => (globalThis as unknown as Dom).window.voiceTurns ?? [])
}
