import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { chromiumSkipReason, launchChromium } from '../../../helpers/browser.ts'
import { buildTestApp, type Cleanup, engineIndependent } from '../../../helpers/build-app.ts'

const ARTEFACTS = 'test-results/avatar-page'

let browser: Browser | undefined

// The DOM as the callbacks that run in the page use it. This project compiles against Node's
// types, not the DOM's; each callback takes these from `globalThis` (the cast is erased, so
// the browser runs plain `globalThis`).
interface DomElement {
  textContent: string | null
  dataset: Record<string, string | undefined>
  classList: { contains(name: string): boolean }
  getAttribute(name: string): string | null
}
interface Dom {
  document: {
    querySelector(selector: string): DomElement | null
    querySelectorAll(selector: string): Iterable<DomElement>
    body: DomElement
  }
  window: { replySnapshots?: string[]; actionsSeen?: string[]; testNow?: number; avatarClock?: () => number }
  requestAnimationFrame(callback: () => void): void
  MutationObserver: new (callback: () => void) => { observe(target: unknown, options: Record<string, boolean>): void }
  getComputedStyle(element: DomElement | null): { transform: string; animationName: string; opacity: string; fill: string }
  localStorage: { getItem(key: string): string | null }
}

before(async () => {
  if (engineIndependent || chromiumSkipReason()) return
  mkdirSync(ARTEFACTS, { recursive: true })
  browser = await launchChromium([
      '--autoplay-policy=no-user-gesture-required',
      // A fake microphone (a beep) that needs no permission prompt.
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
    ])
})
after(() => browser?.close())

async function startApp(t: Cleanup, env: Record<string, string> = {}) {
  const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0', ...env } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  assert.ok(address && typeof address === 'object')
  return { app, base: `http://127.0.0.1:${address.port}` }
}

/**
 * A page that fails the test on any script error or any request leaving the server. With
 * `clock`, the page's lip-sync clock is `window.testNow`, which the test moves.
 */
async function openPage(t: Cleanup, base: string, options: { clock?: boolean } = {}): Promise<Page> {
  assert.ok(browser)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  t.after(() => context.close())
  await context.grantPermissions(['microphone'], { origin: base })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    // Failed loads are reported with their URL below.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console error: ${message.text()}`)
  })
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.request().method()} ${response.url()}`)
  })
  page.on('request', (request) => {
    if (!request.url().startsWith(base) && !request.url().startsWith('blob:') && !request.url().startsWith('data:'))
      problems.push(`external request: ${request.url()}`)
  })
  t.after(() => assert.deepEqual(problems, []))
  if (options.clock) {
    await page.addInitScript(() => {
      const { window } = globalThis as unknown as Dom
      window.testNow = 0
      window.avatarClock = () => window.testNow ?? 0
    })
  }
  await page.goto(`${base}/avatar`)
  await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#status')?.textContent?.startsWith('Ready'))
  return page
}

/** Records every text the last assistant message shows, to prove it arrived in pieces. */
async function recordReplyText(page: Page) {
  await page.evaluate(() => {
    const { document, window, MutationObserver } = globalThis as unknown as Dom
    const seen: string[] = []
    window.replySnapshots = seen
    new MutationObserver(() => {
      const last = [...document.querySelectorAll('#messages li.assistant .content')].at(-1)
      const text = last?.textContent ?? ''
      if (text && seen.at(-1) !== text) seen.push(text)
    }).observe(document.querySelector('#messages'), { subtree: true, childList: true, characterData: true })
  })
  return () => page.evaluate(() => (globalThis as unknown as Dom).window.replySnapshots ?? [])
}

/**
 * Records every action the avatar takes. A gesture lasts 6 s and then gives way to 'speak' while
 * the voice goes on: on a loaded machine a test can look later than that, so it asks whether the
 * action was taken rather than whether it is still showing.
 */
async function recordActions(page: Page) {
  await page.evaluate(() => {
    const { document, window, MutationObserver } = globalThis as unknown as Dom
    const avatar = document.querySelector('#avatar') as DomElement
    const seen: string[] = []
    window.actionsSeen = seen
    new MutationObserver(() => {
      const action = avatar.dataset.action ?? ''
      if (seen.at(-1) !== action) seen.push(action)
    }).observe(avatar, { attributes: true })
  })
  return () => page.evaluate(() => (globalThis as unknown as Dom).window.actionsSeen ?? [])
}

/**
 * On CI's loaded machine a test of this file has twice stalled until the 120 s test timeout
 * (once the first test, once the microphone test; neither reproduced here under load, where
 * each takes 6–21 s): an attempt still running after ATTEMPT_MS is abandoned and the test runs
 * once more. Only a stall is retried: an attempt that fails, fails the test.
 */
const ATTEMPT_MS = 55_000

function itRetryingStalls(name: string, body: (t: TestContext) => Promise<void>) {
  it(name, async (t) => {
    let timer: NodeJS.Timeout | undefined
    const first = body(t)
    const stalled = new Promise<'stalled'>((resolve) => {
      timer = setTimeout(() => resolve('stalled'), ATTEMPT_MS)
    })
    const outcome = await Promise.race([first.then(() => 'passed' as const), stalled])
    clearTimeout(timer)
    if (outcome === 'passed') return
    first.catch(() => {})
    t.diagnostic(`the first attempt was still running after ${ATTEMPT_MS / 1000} s; running the test once more`)
    await body(t)
  })
}

describe('the avatar page in Chromium', { skip: engineIndependent || chromiumSkipReason() }, () => {
  itRetryingStalls('streams a reply, applies its emotion and action, speaks it with a moving mouth, resumes and deletes the conversation', async (t) => {
    const { app, base } = await startApp(t, { AVATAR_MOCK_TOKEN_DELAY: '40ms' })
    const message = 'Hello! Could you dance for me?'
    // The mock is deterministic: the same text gets the same reply in any session.
    const expected = (await app.inject({ method: 'POST', url: '/v1/chat', payload: { userText: message } })).json()
    assert.notEqual(expected.action, 'idle')

    const page = await openPage(t, base)
    const snapshots = await recordReplyText(page)
    const actions = await recordActions(page)
    await page.fill('#input', message)
    await page.press('#input', 'Enter')

    await page.waitForFunction(
      (text) => (globalThis as unknown as Dom).document.querySelector('#messages li.assistant:last-child .content')?.textContent === text,
      expected.replyText,
    )
    const seen = await snapshots()
    assert.ok(seen.length >= 3, `the reply arrived in ${seen.length} pieces`)
    for (let index = 1; index < seen.length; index++) assert.ok(seen[index].startsWith(seen[index - 1]) || index === seen.length - 1)

    const avatar = page.locator('#avatar')
    await page.waitForFunction((emotion) => (globalThis as unknown as Dom).document.querySelector('#avatar')?.dataset.emotion === emotion, expected.emotion)
    assert.ok((await actions()).includes(expected.action), `the avatar took the reply's action, ${expected.action}`)
    assert.equal(await page.textContent('#emotion-label'), expected.emotion)
    await page.screenshot({ path: `${ARTEFACTS}/reply.png` })

    // The reply is spoken: audio plays and the mouth opens with its loudness.
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#avatar')?.getAttribute('data-speaking') === 'true')
    await avatar.screenshot({ path: `${ARTEFACTS}/speaking.png` })
    await page.waitForFunction(() => Number((globalThis as unknown as Dom).document.body.dataset.audioPlayed ?? 0) >= 1, undefined, { timeout: 30_000 })
    const peak = Number(await page.evaluate(() => (globalThis as unknown as Dom).document.body.dataset.peakMouth))
    assert.ok(peak > 0.05, `the mouth opened to ${peak}`)

    // The conversation is listed with both messages; deleting it removes it here and on the server.
    const sessionId = await page.evaluate(() => (globalThis as unknown as Dom).localStorage.getItem('triad.avatar.session'))
    assert.ok(sessionId)
    const entry = page.locator(`#session-list li[data-session-id="${sessionId}"]`)
    await entry.waitFor()
    assert.match((await entry.textContent()) ?? '', /2 messages/)
    // A new conversation clears the view; clicking the old one brings its history back.
    await page.click('#new-session')
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#messages li') === null)
    await page.click(`#session-list li[data-session-id="${sessionId}"] button.open`)
    await page.waitForFunction(
      (text) => (globalThis as unknown as Dom).document.querySelector('#messages li.assistant .content')?.textContent === text,
      expected.replyText,
    )
    assert.equal(await page.locator('#messages li').count(), 2)
    assert.equal(await page.evaluate(() => (globalThis as unknown as Dom).localStorage.getItem('triad.avatar.session')), sessionId)
    await page.click(`#session-list li[data-session-id="${sessionId}"] button.delete`)
    await entry.waitFor({ state: 'detached' })
    const sessions = (await app.inject({ method: 'GET', url: '/v1/sessions' })).json().sessions as Array<{ id: string }>
    assert.ok(!sessions.some((session) => session.id === sessionId))
    assert.equal(await page.locator('#messages li').count(), 0)
    await page.screenshot({ path: `${ARTEFACTS}/deleted.png` })
  })

  itRetryingStalls('stops the stream and the voice at once with the stop button (barge-in)', async (t) => {
    // Slow enough that the reply (26 tokens) is still streaming when its first sentence (6 tokens)
    // is spoken, even when synthesis is slowed by a loaded machine: at 250 ms, and at 1 s under a
    // load of 20 on two cores, the whole reply arrived before the first sentence was synthesised.
    const { base } = await startApp(t, { AVATAR_MOCK_TOKEN_DELAY: '2s' })
    const page = await openPage(t, base)
    const snapshots = await recordReplyText(page)
    await page.fill('#input', 'I am so sad, my cat died yesterday.')
    await page.click('#send')
    // Wait until the first sentence is out and being spoken, while tokens still arrive.
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#avatar')?.getAttribute('data-speaking') === 'true', undefined, {
      timeout: 45_000,
    })
    assert.equal(await page.isEnabled('#stop'), true)
    await page.click('#stop')
    const atStop = (await snapshots()).at(-1)
    assert.equal(await page.getAttribute('#avatar', 'data-speaking'), 'false')
    await page.waitForTimeout(1200)
    // Nothing more arrived, nothing is playing, and the reply is marked as interrupted.
    assert.equal((await snapshots()).at(-1), atStop)
    assert.equal(await page.getAttribute('#avatar', 'data-speaking'), 'false')
    assert.equal(await page.locator('#messages li.assistant.interrupted').count(), 1)
    assert.equal(await page.isEnabled('#stop'), false)
    await page.screenshot({ path: `${ARTEFACTS}/stopped.png` })
  })

  itRetryingStalls('moves the mouth along the viseme timeline of what an operator makes it say; barge-in stops voice and mouth', async (t) => {
    const key = 'operator-key-for-the-page-test'
    const { app, base } = await startApp(t, { AVATAR_OPERATOR_KEY: key })
    const page = await openPage(t, base, { clock: true })
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.body.dataset.operatorListening === 'true')
    const sessionId = await page.evaluate(() => (globalThis as unknown as Dom).localStorage.getItem('triad.avatar.session'))
    const operator = (path: string, payload: object) =>
      app.inject({ method: 'POST', url: `/v1/session/${sessionId}/${path}`, headers: { authorization: `Bearer ${key}` }, payload })

    const actions = await recordActions(page)
    const synthesis = page.waitForResponse((response) => response.url().endsWith('/v1/tts'))
    const text = Array.from({ length: 10 }, () => 'Papa').join(', ') + '.'
    const said = await operator('say', { text, emotion: 'happy', action: 'wave', voice: 'en-US-GuyNeural' })
    assert.equal(said.statusCode, 200)
    const { visemes } = (await (await synthesis).json()) as { visemes: Array<{ viseme: string; start_ms: number; end_ms: number }> }
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#avatar')?.getAttribute('data-speaking') === 'true')
    assert.equal(await page.textContent('#messages li.operator .content'), text)
    assert.equal(await page.getAttribute('#avatar', 'data-emotion'), 'happy')
    assert.ok((await actions()).includes('wave'), 'the avatar waved')

    // Playback started at testNow = 0: the mouth shows the timeline's viseme at each instant.
    const mouthAt = (ms: number) =>
      page.evaluate(
        (at) =>
          new Promise<{ viseme?: string; open?: string }>((resolve) => {
            const { window, document, requestAnimationFrame } = globalThis as unknown as Dom
            window.testNow = at
            let frames = 0
            const wait = () => {
              if (++frames < 6) return requestAnimationFrame(wait)
              const mouth = document.querySelector('#mouth')
              resolve({ viseme: mouth?.dataset.viseme, open: mouth?.dataset.open })
            }
            requestAnimationFrame(wait)
          }),
        ms,
      )
    const middleOf = (viseme: string, nth = 0) => {
      const span = visemes.filter((candidate) => candidate.viseme === viseme)[nth]
      assert.ok(span, `${viseme} in ${JSON.stringify(visemes)}`)
      return Math.floor((span.start_ms + span.end_ms) / 2)
    }
    const closed = await mouthAt(middleOf('PP', 1))
    assert.equal(closed.viseme, 'PP')
    const open = await mouthAt(middleOf('aa', 1))
    assert.equal(open.viseme, 'aa')
    assert.ok(Number(open.open) > Number(closed.open) + 0.3, `aa opens the mouth to ${open.open}, PP to ${closed.open}`)
    assert.equal((await mouthAt(Math.floor(visemes[0].end_ms / 2))).viseme, visemes[0].viseme)
    assert.equal((await mouthAt(middleOf('PP', 2))).viseme, 'PP')
    await page.locator('#avatar').screenshot({ path: `${ARTEFACTS}/viseme.png` })

    // Barge-in: the voice and the timeline stop together, the mouth rests.
    await page.click('#stop')
    assert.equal(await page.getAttribute('#avatar', 'data-speaking'), 'false')
    assert.equal((await mouthAt(middleOf('aa', 2))).viseme, 'sil')

    // An act changes the face and the gesture without a word.
    assert.equal((await operator('act', { emotion: 'sad', action: 'nod' })).statusCode, 200)
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#avatar')?.dataset.emotion === 'sad')
    assert.equal(await page.getAttribute('#avatar', 'data-action'), 'nod')
  })

  itRetryingStalls('shows the five emotions on the face and plays the eight actions with the body', async (t) => {
    const { base } = await startApp(t)
    const page = await openPage(t, base)
    const look = (selector: string) =>
      page.evaluate((query) => {
        const { document, getComputedStyle } = globalThis as unknown as Dom
        const style = getComputedStyle(document.querySelector(query))
        return `${style.transform}|${style.animationName}|${style.opacity}|${style.fill}`
      }, selector)
    const faces = new Set<string>()
    for (const emotion of ['neutral', 'happy', 'surprised', 'sad', 'angry']) {
      await page.evaluate((value) => {
        const avatar = (globalThis as unknown as Dom).document.querySelector('#avatar') as DomElement
        avatar.dataset.emotion = value
        avatar.dataset.action = 'idle'
      }, emotion)
      await page.waitForTimeout(450) // let the transitions finish
      faces.add(`${await look('.brow-left')}#${await look('.eye-left')}#${await look('.face')}#${await look('.tear')}`)
      await page.locator('#avatar').screenshot({ path: `${ARTEFACTS}/emotion-${emotion}.png` })
    }
    assert.equal(faces.size, 5, 'each emotion looks different')
    const bodies = new Set<string>()
    for (const action of ['idle', 'wave', 'greet', 'think', 'nod', 'shakeHead', 'dance', 'speak']) {
      await page.evaluate((value) => {
        const avatar = (globalThis as unknown as Dom).document.querySelector('#avatar') as DomElement
        avatar.dataset.emotion = 'neutral'
        avatar.dataset.action = value
      }, action)
      await page.waitForTimeout(450)
      bodies.add(
        [await look('.arm-right'), await look('.arm-left'), await look('.head-rig'), await look('.body-rig'), await look('.thought')]
          .map((value) => value.split('|').slice(1, 3).join('|'))
          .join('#'),
      )
      await page.locator('#avatar').screenshot({ path: `${ARTEFACTS}/action-${action}.png` })
    }
    assert.equal(bodies.size, 8, 'each action moves differently')
  })

  itRetryingStalls('records the microphone and sends it to recognition, which answers', async (t) => {
    const { base } = await startApp(t)
    const page = await openPage(t, base)
    const title = await page.getAttribute('#mic', 'title')
    if (await page.isDisabled('#mic')) {
      // No recognizer on this machine: the next test covers that case.
      t.skip(`recognition unavailable: ${title}`)
      return
    }
    await page.click('#mic')
    await page.waitForFunction(() => (globalThis as unknown as Dom).document.querySelector('#mic')?.classList.contains('recording'))
    await page.waitForTimeout(1500)
    const answer = page.waitForResponse((response) => response.url().endsWith('/v1/asr'))
    await page.click('#mic')
    const response = await answer
    assert.equal(response.status(), 200, await response.text())
    const body = await response.json()
    assert.equal(typeof body.text, 'string')
    assert.ok(body.duration > 1 && body.duration < 3, `${body.duration} s recorded`)
  })

  itRetryingStalls('disables the microphone with a tooltip saying what to configure when recognition is unavailable', async (t) => {
    const { base } = await startApp(t, { AVATAR_ASR_POCKETSPHINX_MODEL: '/nonexistent' })
    const page = await openPage(t, base)
    assert.equal(await page.isDisabled('#mic'), true)
    assert.match((await page.getAttribute('#mic', 'title')) ?? '', /AVATAR_ASR_API_KEY/)
    assert.match((await page.getAttribute('#mic-wrap', 'title')) ?? '', /not configured/)
  })
})
