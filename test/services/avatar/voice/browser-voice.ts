// The avatar page in voice mode in Chromium with a fake microphone that speaks recordings: for
// the browser test (voice.browser.test.ts) and bench/avatar-voice-browser.ts.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { decodeWav, encodeWav16, joinSamples, resample } from '../../../../src/services/avatar/providers/asr/wav-decode.ts'
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

/** A microphone file: where its beep starts and where each recording's speech ends, in seconds of the file. */
export interface MicrophoneFile {
  path: string
  markerSeconds: number
  speechEnds: number[]
  durationSeconds: number
}

/**
 * The end of the last 10 ms window within 20 dB of the loudest one: where the speech of a
 * recording ends. LibriVox recordings keep breath and room noise at 20-35 dB under the speech up
 * to their last sample; 20 dB puts the end before that tail (an early end makes latency look
 * longer, never shorter).
 */
function speechEnd(samples: Float32Array): number {
  const window = RATE / 100
  const levels: number[] = []
  for (let start = 0; start + window <= samples.length; start += window) {
    let sum = 0
    for (let index = start; index < start + window; index++) sum += samples[index] * samples[index]
    levels.push(Math.sqrt(sum / window))
  }
  const floor = Math.max(...levels) / 10 ** (20 / 20)
  const last = levels.findLastIndex((level) => level > floor)
  return ((last + 1) * window) / RATE
}

/**
 * A WAV for Chromium's fake microphone: a 30 ms beep at 0.5 s (the page finds it on its clock),
 * silence up to `leadSeconds` (Chromium drops what plays before the page connects its source),
 * then the recordings one after another with `gapSeconds` of silence after each (Chromium
 * repeats the last 10 ms after `%noloop`).
 */
export function fakeMicrophoneWav(files: string[], path: string, options: { leadSeconds: number; gapSeconds: number }): MicrophoneFile {
  const markerSeconds = 0.5
  const lead = new Float32Array(options.leadSeconds * RATE)
  for (let index = 0; index < 0.03 * RATE; index++) lead[markerSeconds * RATE + index] = 0.8 * Math.sin((2 * Math.PI * 1000 * index) / RATE)
  const parts: Float32Array[] = [lead]
  const speechEnds: number[] = []
  let offset = lead.length
  for (const file of files) {
    const decoded = decodeWav(readFileSync(file))
    if (!decoded) throw new Error(`not a WAV: ${file}`)
    const recording = resample(decoded, RATE)
    speechEnds.push(offset / RATE + speechEnd(recording))
    parts.push(recording, new Float32Array(options.gapSeconds * RATE))
    offset += recording.length + options.gapSeconds * RATE
  }
  writeFileSync(path, encodeWav16(joinSamples(parts), RATE))
  return { path, markerSeconds, speechEnds, durationSeconds: offset / RATE }
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
  window: { voiceTurns?: PageTurn[]; voiceCapture?: { markerAt?: number; encoding?: string; audioBytes?: number; startedAt?: number; lastSentAt?: number } }
}

/** Opens the page (`/avatar` and `query`) and turns hands-free voice mode on, with `endOfTurnMs`. */
export async function startTalking(browser: Browser, base: string, endOfTurnMs: number, query = ''): Promise<Page> {
  const context = await browser.newContext()
  await context.grantPermissions(['microphone'], { origin: base })
  const page = await context.newPage()
  await page.goto(`${base}/avatar${query}`)
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
  return measuredTurns(page)
}

/** The encoding the server confirmed in `voice.started`. */
export function pageEncoding(page: Page): Promise<string | undefined> {
  return page.evaluate(() => (globalThis as unknown as Dom).window.voiceCapture?.encoding)
}

/** The audio bytes a second the page has sent since voice mode went on (on its clock). */
export async function pageAudioBytesPerSecond(page: Page): Promise<number> {
  const capture = await page.evaluate(() => (globalThis as unknown as Dom).window.voiceCapture)
  const seconds = (capture?.lastSentAt ?? 0) - (capture?.startedAt ?? 0)
  return seconds > 0 ? Math.round((capture?.audioBytes ?? 0) / seconds) : 0
}

/** The turns the page has measured so far. */
export function measuredTurns(page: Page): Promise<PageTurn[]> {
  return page.evaluate(() => (globalThis as unknown as Dom).window.voiceTurns ?? [])
}

/**
 * The end of the speech of each turn on the page's clock: the end of the recording whose speech
 * the turn ended after (within `withinSeconds`); undefined for a turn that ended at a pause
 * inside a recording, or when the page never heard the beep.
 */
export async function speechEndsOnPage(page: Page, microphone: MicrophoneFile, turns: PageTurn[], withinSeconds = 2): Promise<Array<number | undefined>> {
  const markerAt = await page.evaluate(() => (globalThis as unknown as Dom).window.voiceCapture?.markerAt)
  if (markerAt === undefined) return turns.map(() => undefined)
  const ends = microphone.speechEnds.map((end) => markerAt + end - microphone.markerSeconds)
  return turns.map((turn) => ends.find((end) => end <= turn.endOfTurn && turn.endOfTurn - end <= withinSeconds))
}
