import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { pocketsphinxInstalled } from '../../../../src/services/avatar/providers/asr/pocketsphinx.asr.ts'
import { chromiumSkipReason } from '../../../helpers/browser.ts'
import { buildTestApp, engineIndependent } from '../../../helpers/build-app.ts'
import { fakeMicrophoneWav, fileToPageClock, LIBRIVOX, launchWithMicrophone, librivoxRecordings, measuredTurns, pageAudioBytesPerSecond, pageClockReaches, pageEncoding, pageHistory, pageTurns, speechEndsOnPage, startTalking } from './browser-voice.ts'

// Chromium's fake microphone speaks a LibriVox sentence of pocketsphinx-testdata to the page in
// hands-free voice mode: the page streams it over /ws, pocketsphinx hears it as it is spoken,
// the mock answers, and the page plays the reply with the mouth following its visemes.
const skip =
  engineIndependent ||
  chromiumSkipReason() ||
  (!pocketsphinxInstalled({ command: 'pocketsphinx_continuous', modelDir: '/usr/share/pocketsphinx/model/en-us' }) && 'pocketsphinx is not installed') ||
  (!existsSync(LIBRIVOX) && 'pocketsphinx-testdata is not installed')

/**
 * Chromium whose microphone says "he was not an ill disposed young man" (LibriVox 0880, 3 s)
 * once, and an avatar instance with pocketsphinx listening on 127.0.0.1.
 */
async function oneSentence(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'triad-voice-page-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const recording = librivoxRecordings().find((entry) => entry.file.endsWith('-0880.wav'))
  assert.ok(recording)
  const microphone = fakeMicrophoneWav([recording.file], join(dir, 'microphone.wav'), { leadSeconds: 1.5, gapSeconds: 4 })
  const browser = await launchWithMicrophone(microphone.path)
  t.after(() => browser.close())
  const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx', AVATAR_TTS_THREADS: '1' } })
  return { recording, microphone, browser, base: await app.listen({ port: 0, host: '127.0.0.1' }) }
}

describe('the avatar page in voice mode, in Chromium with a fake microphone', { skip }, () => {
  it('hears a recorded sentence, shows the transcript, plays the reply and moves the mouth; the listening state is visible and the button is labelled', async (t) => {
    const { recording, microphone, browser, base } = await oneSentence(t)

    const page = await startTalking(browser, base, 500)
    await page.waitForSelector('#talk[aria-pressed="true"]', { timeout: 30_000 })
    await page.waitForFunction(() => (globalThis as unknown as { voiceCapture?: { encoding?: string } }).voiceCapture?.encoding !== undefined, undefined, { timeout: 30_000 })
    assert.equal(await pageEncoding(page), 'pcm16', 'PCM unless Opus is asked for')
    assert.equal(await page.getAttribute('#listening', 'data-state'), 'listening')
    assert.equal(await page.textContent('#listening'), 'Listening…')

    const [turn] = await pageTurns(page, 1, 90_000)
    const said = new Set(recording.words)
    const heard = turn.text.split(/\s+/).filter((word) => said.has(word))
    assert.ok(new Set(heard).size >= 3, `heard ${JSON.stringify(turn.text)} for ${JSON.stringify(recording.words.join(' '))}`)
    // On the page's clock, in order: the end of speech (the file's, placed by its beep), the end of turn, the transcript, the reply's first sound.
    const [speechEnd] = await speechEndsOnPage(page, microphone, [turn])
    assert.ok(speechEnd !== undefined, 'the page heard the beep, and the turn ended after the recording')
    assert.ok(speechEnd <= turn.endOfTurn && turn.endOfTurn <= turn.transcript && turn.transcript <= turn.firstToken, JSON.stringify(turn))
    assert.ok(turn.audioArrived <= turn.playStart, JSON.stringify(turn))
    // The conversation shows what was heard and the reply; the reply's audio played, the mouth moved through visemes.
    assert.equal(await page.locator('#messages li.user .content').last().textContent(), turn.text)
    t.diagnostic(`heard ${JSON.stringify(turn.text)}; page clock (s): ${JSON.stringify({ speechEnd, ...turn })}`)
    const pcmRate = await pageAudioBytesPerSecond(page)
    t.diagnostic(`PCM sent: ${pcmRate} bytes a second`)
    assert.ok(Math.abs(pcmRate - 32_000) < 3200, `${pcmRate} B/s`)
    await page.waitForFunction(() => Number((globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset.voiceAudioPlayed ?? 0) >= 1, undefined, { timeout: 60_000 })
    assert.ok(Number(await page.evaluate(() => (globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset.peakMouth ?? 0)) > 0.2)

    await page.click('#talk')
    assert.equal(await page.getAttribute('#talk', 'aria-pressed'), 'false')
    assert.equal(await page.getAttribute('#listening', 'data-state'), 'off')
  })

  it('sends Opus packets (WebCodecs AudioEncoder) when the page is opened with ?voiceEncoding=opus, and the turn is heard as with PCM', async (t) => {
    const { recording, browser, base } = await oneSentence(t)
    const page = await startTalking(browser, base, 500, { query: '?voiceEncoding=opus' })
    await page.waitForFunction(() => (globalThis as unknown as { voiceCapture?: { encoding?: string } }).voiceCapture?.encoding !== undefined, undefined, { timeout: 30_000 })
    assert.equal(await pageEncoding(page), 'opus')
    const [turn] = await pageTurns(page, 1, 90_000)
    const said = new Set(recording.words)
    const heard = turn.text.split(/\s+/).filter((word) => said.has(word))
    assert.ok(new Set(heard).size >= 3, `heard ${JSON.stringify(turn.text)} for ${JSON.stringify(recording.words.join(' '))}`)
    const opusRate = await pageAudioBytesPerSecond(page)
    t.diagnostic(`heard ${JSON.stringify(turn.text)} through Opus, ${opusRate} bytes a second sent`)
    assert.ok(opusRate > 0 && opusRate < 32_000 / 5, `${opusRate} B/s`)
    await page.click('#talk')
  })

  it('push-to-talk: only what is said while "Hold to talk" is held (Space on it) is sent; releasing it ends the turn, which gets its transcript and a spoken reply', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'triad-voice-ptt-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const recordings = librivoxRecordings()
    // Said before the button is held: "he might even have been made amiable himself" (3.3 s), then, held: "he was not an ill disposed young man" (3 s).
    const before = recordings.find((entry) => entry.file.endsWith('-0930.wav'))
    const held = recordings.find((entry) => entry.file.endsWith('-0880.wav'))
    assert.ok(before && held)
    const microphone = fakeMicrophoneWav([{ file: before.file, gapSeconds: 2 }, held.file], join(dir, 'microphone.wav'), { leadSeconds: 2, gapSeconds: 6 })
    const browser = await launchWithMicrophone(microphone.path)
    t.after(() => browser.close())
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0', AVATAR_ASR_PROVIDER: 'pocketsphinx', AVATAR_TTS_THREADS: '1' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })

    // Every binary frame the page sends, by the phase of the button when it was sent.
    const phase = { now: 'before' as 'before' | 'held' | 'after' }
    const sent = { before: 0, held: 0, after: 0 }
    const texts: string[] = []
    const watch = (page: Page) =>
      page.on('websocket', (socket) => {
        socket.on('framesent', ({ payload }) => {
          if (typeof payload === 'string') texts.push(JSON.parse(payload).type)
          else sent[phase.now]++
        })
      })
    const page = await startTalking(browser, base, 500, { mode: 'push-to-talk', probe: true, watch })
    await page.waitForSelector('#hold:not([hidden])', { timeout: 30_000 })
    assert.equal(await page.getAttribute('#listening', 'data-state'), 'ready')
    const onPage = await fileToPageClock(page, microphone)
    const [, heldStart] = microphone.speechStarts
    const [, heldEnd] = microphone.speechEnds
    // Held from 0.5 s before the second recording's speech to 0.6 s after it.
    await pageClockReaches(page, onPage(heldStart - 0.5))
    phase.now = 'held'
    await page.focus('#hold')
    await page.keyboard.down('Space')
    await page.waitForSelector('#hold[aria-pressed="true"]')
    assert.equal(await page.getAttribute('#listening', 'data-state'), 'listening')
    await pageClockReaches(page, onPage(heldEnd + 0.6))
    await page.keyboard.up('Space')
    await page.waitForSelector('#hold[aria-pressed="false"]')
    await page.waitForTimeout(300)
    phase.now = 'after'

    const [turn] = await pageTurns(page, 1, 90_000)
    const heard = turn.text.split(/\s+/)
    assert.ok(new Set(heard.filter((word) => held.words.includes(word))).size >= 3, `heard ${JSON.stringify(turn.text)} for ${JSON.stringify(held.words.join(' '))}`)
    // Words only the first recording has ("might even have been made amiable himself") were never sent.
    const onlyBefore = before.words.filter((word) => !held.words.includes(word))
    assert.deepEqual(heard.filter((word) => onlyBefore.includes(word)), [], `heard ${JSON.stringify(turn.text)}`)
    assert.equal(await page.locator('#messages li.user .content').last().textContent(), turn.text)
    await page.waitForFunction(() => Number((globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset.voiceAudioPlayed ?? 0) >= 1, undefined, { timeout: 60_000 })
    await page.waitForTimeout(1000)
    assert.equal((await measuredTurns(page)).length, 1, 'one turn')
    t.diagnostic(`heard ${JSON.stringify(turn.text)}; frames sent ${JSON.stringify(sent)}; text frames ${JSON.stringify(texts)}`)
    assert.equal(sent.before, 0, 'nothing sent before the button was held')
    assert.equal(sent.after, 0, 'nothing sent after it was released')
    // About 20 ms a frame for the 4.1 s held (a loaded machine may start the press late).
    assert.ok(sent.held >= 120 && sent.held <= 260, `${sent.held} frames while held`)
    assert.deepEqual(texts, ['voice.start', 'voice.stop'])
    // Stored once the page has played the reply.
    const history = await pageHistory(page, base, 2, 30_000)
    assert.deepEqual(
      history.map((message) => message.role),
      ['user', 'assistant'],
    )
    assert.equal(history[0].content, turn.text)
  })
})
