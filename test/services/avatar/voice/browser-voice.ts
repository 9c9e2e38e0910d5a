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

/** A microphone file: where its beep starts and where each part's speech starts and ends, in seconds of the file. */
export interface MicrophoneFile {
  path: string
  markerSeconds: number
  speechStarts: number[]
  speechEnds: number[]
  durationSeconds: number
}

/** What a microphone file says: a recording (a WAV file) or samples at 16 kHz, and the silence after it. */
export type MicrophonePart = string | { file?: string; samples?: Float32Array; gapSeconds?: number }

/**
 * Where the speech of a recording starts and ends: the first 10 ms window that begins 50 ms
 * within 20 dB of the loudest one, and the last window within those 20 dB. LibriVox recordings
 * keep breath and room noise at 20-35 dB under the speech up to their last sample; 20 dB puts the
 * end before that tail (an early end makes latency look longer, never shorter) and the start
 * after the breath before the first word. The start asks for 50 ms because a single window of
 * noise can reach the 20 dB: 0880's room noise does, 230 ms before its first word.
 */
export function speechBounds(samples: Float32Array): { start: number; end: number } {
  const window = RATE / 100
  const levels: number[] = []
  for (let start = 0; start + window <= samples.length; start += window) {
    let sum = 0
    for (let index = start; index < start + window; index++) sum += samples[index] * samples[index]
    levels.push(Math.sqrt(sum / window))
  }
  const floor = Math.max(...levels) / 10 ** (20 / 20)
  const sustained = 5
  const first = levels.findIndex((_, index) => index + sustained <= levels.length && levels.slice(index, index + sustained).every((level) => level > floor))
  const last = levels.findLastIndex((level) => level > floor)
  return { start: (first * window) / RATE, end: ((last + 1) * window) / RATE }
}

/** 16 kHz samples of a recording. */
export function recordingSamples(file: string): Float32Array {
  const decoded = decodeWav(readFileSync(file))
  if (!decoded) throw new Error(`not a WAV: ${file}`)
  return resample(decoded, RATE)
}

/**
 * A WAV for Chromium's fake microphone: a 30 ms beep at 0.5 s (the page finds it on its clock),
 * silence up to `leadSeconds` (Chromium drops what plays before the page connects its source),
 * then the parts one after another with silence after each (its own `gapSeconds`, else
 * `options.gapSeconds`; Chromium repeats the last 10 ms after `%noloop`).
 */
export function fakeMicrophoneWav(parts: MicrophonePart[], path: string, options: { leadSeconds: number; gapSeconds: number }): MicrophoneFile {
  const markerSeconds = 0.5
  const lead = new Float32Array(options.leadSeconds * RATE)
  for (let index = 0; index < 0.03 * RATE; index++) lead[markerSeconds * RATE + index] = 0.8 * Math.sin((2 * Math.PI * 1000 * index) / RATE)
  const audio: Float32Array[] = [lead]
  const speechStarts: number[] = []
  const speechEnds: number[] = []
  let offset = lead.length
  for (const part of parts) {
    const { file, samples, gapSeconds = options.gapSeconds } = typeof part === 'string' ? { file: part } : part
    const recording = samples ?? (file ? recordingSamples(file) : new Float32Array(0))
    const bounds = speechBounds(recording)
    speechStarts.push(offset / RATE + bounds.start)
    speechEnds.push(offset / RATE + bounds.end)
    const gap = new Float32Array(Math.round(gapSeconds * RATE))
    audio.push(recording, gap)
    offset += recording.length + gap.length
  }
  writeFileSync(path, encodeWav16(joinSamples(audio), RATE))
  return { path, markerSeconds, speechStarts, speechEnds, durationSeconds: offset / RATE }
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

/** A pause of the reply (the server's `paused`), in seconds on the page's clock. */
export interface PagePause {
  at: number
  atMs: number
  stopped: number
  sounding: boolean
  resumed?: number
  playsAgain?: number
}

/** One turn as the page measured it, in seconds on its AudioContext's clock (voice.js). */
export interface PageTurn {
  speechStart: number
  endOfTurn: number
  transcript: number
  firstToken: number
  audioArrived: number
  playStart: number
  text: string
  pauses?: PagePause[]
  interrupted?: number
  /** When the page stopped playback that was sounding (a pause that was not resumed, an interruption). */
  stopped?: number
}

/** One AudioBufferSourceNode the page started, as the probe saw it (context seconds). */
export interface SourceStart {
  when: number
  offset: number
  length: number
  calledAt: number
  stoppedAt?: number
  endedAt?: number
}

/**
 * Watches the page's audio from outside its code: the page's AudioContext becomes
 * `window.audioContextOfPage`, and every AudioBufferSourceNode started (when, offset, the
 * buffer's length) and stopped is listed in `window.audioSources`.
 */
export const AUDIO_PROBE = `(() => {
  const sources = []
  window.audioSources = sources
  const Original = window.AudioContext
  window.AudioContext = class extends Original {
    constructor(...args) {
      super(...args)
      window.audioContextOfPage = this
    }
  }
  const start = AudioBufferSourceNode.prototype.start
  AudioBufferSourceNode.prototype.start = function (when = 0, offset = 0, ...rest) {
    const entry = { when: Math.max(when, this.context.currentTime), offset, length: this.buffer ? this.buffer.duration : 0, calledAt: this.context.currentTime }
    sources.push(entry)
    this.probeEntry = entry
    this.addEventListener('ended', () => (entry.endedAt = this.context.currentTime))
    return start.call(this, when, offset, ...rest)
  }
  const stop = AudioBufferSourceNode.prototype.stop
  AudioBufferSourceNode.prototype.stop = function (when = 0) {
    if (this.probeEntry && this.probeEntry.stoppedAt === undefined) this.probeEntry.stoppedAt = Math.max(when, this.context.currentTime)
    return stop.call(this, when)
  }
})()`

/** When a source sounds: from its start to where it was stopped or its buffer ends (empty when stopped before it began). */
export function soundingSpan(source: SourceStart): { from: number; to: number } {
  const end = source.when + source.length - source.offset
  return { from: source.when, to: source.stoppedAt === undefined ? end : Math.max(source.when, Math.min(end, source.stoppedAt)) }
}

// The DOM as the callbacks that run in the page use it (this project compiles against Node's types).
interface Dom {
  document: { querySelector(selector: string): { textContent: string | null; dataset: Record<string, string | undefined> } | null; body: { dataset: Record<string, string | undefined> } }
  window: {
    voiceTurns?: PageTurn[]
    voiceCapture?: { markerAt?: number; encoding?: string; audioBytes?: number; startedAt?: number; lastSentAt?: number }
    audioSources?: SourceStart[]
    audioContextOfPage?: { currentTime: number }
  }
}

/**
 * Opens the page (`/avatar` and `query`) and turns voice mode on (hands-free unless `mode` says
 * otherwise), with `endOfTurnMs`; `probe` installs the audio probe (AUDIO_PROBE) before the page
 * loads, `watch` is handed the page before it opens anything (to listen to its WebSocket).
 */
export async function startTalking(
  browser: Browser,
  base: string,
  endOfTurnMs: number,
  options: { mode?: 'hands-free' | 'push-to-talk'; probe?: boolean; watch?: (page: Page) => void; minSpeechMs?: number; query?: string } = {},
): Promise<Page> {
  const context = await browser.newContext()
  await context.grantPermissions(['microphone'], { origin: base })
  if (options.probe) await context.addInitScript(AUDIO_PROBE)
  const page = await context.newPage()
  options.watch?.(page)
  await page.goto(`${base}/avatar${options.query ?? ''}`)
  await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#status')?.textContent?.startsWith('Ready'))
  await page.evaluate(
    ([endOfTurn, minSpeech]) => {
      const { dataset } = (globalThis as unknown as Dom).document.body
      dataset.endOfTurnMs = String(endOfTurn)
      if (minSpeech) dataset.minSpeechMs = String(minSpeech)
    },
    [endOfTurnMs, options.minSpeechMs ?? 0],
  )
  if (options.mode) await page.selectOption('#talk-mode', options.mode)
  await page.click('#talk')
  return page
}

/** What the probe saw: the sources the page started, and the context's time now. */
export function audioSources(page: Page): Promise<{ sources: SourceStart[]; now: number }> {
  return page.evaluate(() => {
    const { window } = globalThis as unknown as Dom
    return { sources: window.audioSources ?? [], now: window.audioContextOfPage?.currentTime ?? 0 }
  })
}

/** Waits (bounded) until the page's clock reaches `seconds` (the probe must be installed). */
export async function pageClockReaches(page: Page, seconds: number, timeoutMs = 60_000): Promise<void> {
  await page.waitForFunction((at) => ((globalThis as unknown as Dom).window.audioContextOfPage?.currentTime ?? 0) >= at, seconds, { timeout: timeoutMs, polling: 10 })
}

/** Where the microphone file's second `seconds` is on the page's clock, once the page heard the beep (bounded). */
export async function fileToPageClock(page: Page, microphone: MicrophoneFile, timeoutMs = 30_000): Promise<(seconds: number) => number> {
  const markerAt = await page.waitForFunction(() => (globalThis as unknown as Dom).window.voiceCapture?.markerAt, undefined, { timeout: timeoutMs, polling: 20 })
  const at = Number(await markerAt.jsonValue())
  return (seconds) => at + seconds - microphone.markerSeconds
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
 * The start of each speech in the microphone file on the page's clock (undefined when the page
 * never heard the beep).
 */
export async function speechStartsOnPage(page: Page, microphone: MicrophoneFile): Promise<number[] | undefined> {
  const markerAt = await page.evaluate(() => (globalThis as unknown as Dom).window.voiceCapture?.markerAt)
  if (markerAt === undefined) return undefined
  return microphone.speechStarts.map((start) => markerAt + start - microphone.markerSeconds)
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

/** The page's session history once it holds `count` messages (the server stores an exchange when the page has played it), bounded by `timeoutMs`. */
export async function pageHistory(page: Page, base: string, count: number, timeoutMs = 10_000): Promise<Array<{ role: string; content: string }>> {
  const sessionId = await page.evaluate(() => localStorage.getItem('triad.avatar.session'))
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const body = (await (await fetch(`${base}/v1/session/${sessionId}/history`)).json()) as { messages?: Array<{ role: string; content: string }> }
    if ((body.messages?.length ?? 0) >= count || Date.now() > deadline) return body.messages ?? []
    await page.waitForTimeout(100)
  }
}
