import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { chromiumSkipReason, launchChromium } from '../../helpers/browser.ts'
import type { Cleanup } from '../../helpers/build-app.ts'
import { buildAvatarApp } from './helpers.ts'
import { engineIndependent } from '../../helpers/build-app.ts'

let browser: Browser | undefined

before(async () => {
  if (engineIndependent || chromiumSkipReason()) return
  browser = await launchChromium()
})
after(() => browser?.close())

/** A blank page on an origin of its own (another port), as a front end's dev server would be. */
async function pageOrigin(t: Cleanup): Promise<string> {
  const server: Server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>front end</title>'))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * What the meta-human front end does against `base`, as read from its source
 * (dialogueService.ts, dialogueHttpClient.ts): the health probe, a chat over HTTP and over SSE
 * with a preset character, and the best-effort DELETE of a session on "new conversation".
 */
async function frontEndCalls(base: string) {
  // The front end bounds each call too (5 s for health and delete, 15 s for chat).
  const signal = AbortSignal.timeout(20_000)
  const health = await fetch(`${base}/health`, { method: 'GET', signal })
  const json = { method: 'POST', headers: { 'Content-Type': 'application/json' }, signal }
  const meta = { timestamp: 1, language: 'zh', characterId: 'cute-companion' }
  const chat = await fetch(`${base}/v1/chat`, { ...json, body: JSON.stringify({ sessionId: 'browser-1', userText: '你好', meta }) })
  const stream = await fetch(`${base}/v1/chat/stream`, { ...json, body: JSON.stringify({ sessionId: 'browser-1', userText: 'hello', meta }) })
  const events = (await stream.text()).split('\n\n').filter((block) => block.startsWith('data: '))
  const cleared = await fetch(`${base}/v1/session/browser-1`, { method: 'DELETE', signal })
  const never = await fetch(`${base}/v1/session/never-chatted`, { method: 'DELETE', signal })
  return {
    health: { ok: health.ok, body: (await health.json()) as { services: Record<string, string> } },
    chat: { ok: chat.ok, persona: chat.headers.get('x-avatar-persona'), body: (await chat.json()) as { replyText: string } },
    stream: { ok: stream.ok, persona: stream.headers.get('x-avatar-persona'), last: JSON.parse(events.at(-1)?.slice(6) ?? 'null') },
    deleted: [await cleared.json(), await never.json()],
  }
}

describe('the avatar API from a page on another origin, in Chromium', { skip: engineIndependent }, () => {
  it("serves the meta-human front end's calls across origins by default, and with the server's CORS_ORIGINS set", async (t) => {
    if (!browser) return t.skip(String(chromiumSkipReason()))
    const envs: Record<string, string>[] = [{}, { CORS_ORIGINS: 'https://admin.example.org' }]
    for (const env of envs) {
      const { app } = await buildAvatarApp(t, { env })
      const base = await app.listen({ port: 0, host: '127.0.0.1' })
      const page = await browser.newPage()
      t.after(() => page.close())
      await page.goto(await pageOrigin(t))
      const result = await page.evaluate(frontEndCalls, base)
      await page.close()
      assert.equal(result.health.ok, true)
      assert.equal(result.health.body.services.llm, 'mock_mode')
      assert.equal(result.chat.persona, 'companion')
      assert.match(result.chat.body.replyText, /咪咪/)
      assert.equal(result.stream.persona, 'companion')
      assert.equal(result.stream.last.type, 'done')
      assert.deepEqual(result.deleted, [
        { message: 'Session deleted', cleared: true },
        { message: 'Session deleted', cleared: false },
      ])
    }
  })

  it('is refused by the browser for an origin AVATAR_CORS_ORIGINS does not list', async (t) => {
    if (!browser) return t.skip(String(chromiumSkipReason()))
    const { app } = await buildAvatarApp(t, { env: { AVATAR_CORS_ORIGINS: 'https://avatar.example.org' } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const page = await browser.newPage()
    t.after(() => page.close())
    await page.goto(await pageOrigin(t))
    const outcome = await page.evaluate(async (url) => {
      try {
        await fetch(`${url}/v1/session/x`, { method: 'DELETE', signal: AbortSignal.timeout(20_000) })
        return 'allowed'
      } catch (error) {
        return (error as Error).name
      }
    }, base)
    assert.equal(outcome, 'TypeError')
  })
})
