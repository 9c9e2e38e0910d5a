import assert from 'node:assert/strict'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { chromiumSkipReason, launchChromium } from '../../helpers/browser.ts'
import { buildTestApp, type Cleanup } from '../../helpers/build-app.ts'

// The meta-human web frontend (github LessUp/meta-human) against Triad out of the box, from an
// origin of its own in Chromium, over its three chat transports. The page in
// test/fixtures/frontend-protocol/ speaks the frontend's protocol as its source has it; this
// test asserts what the page observed.

const FIXTURE = new URL('../../fixtures/frontend-protocol/', import.meta.url)

type Transport = 'http' | 'sse' | 'websocket'
type Language = 'zh-CN' | 'en'

interface Reply {
  replyText: string
  emotion: string
  action: string
}
interface NetworkError {
  networkError?: string
}
interface Observed extends NetworkError {
  status?: number
  body?: unknown
  ok?: boolean
  contentType?: string | null
  tokens?: string[]
  done?: Reply | null
  error?: string | null
  ignored?: string[]
  unparsable?: string[]
  opened?: boolean
  timedOut?: boolean
  closed?: { code: number; reason: string } | null
}
interface Turn {
  sessionId: string
  userText: string
  language: Language
  characterId: string
}
// What the fixture page puts on `window` (this project compiles against Node's types, not the
// DOM's: callbacks take it from `globalThis`, and the cast is erased in the browser).
interface Client {
  health(): Promise<Observed>
  chat(transport: Transport, turn: Turn): Promise<Observed>
  deleteSession(sessionId: string): Promise<Observed>
  newSessionId(): string
  probeWebSocket(): Promise<boolean>
}
type PageGlobals = { metaHumanClient: Client }

// The frontend's vocabulary (src/core/avatar/avatarContract.ts): anything else it maps to a default.
const FRONTEND_EMOTIONS = ['neutral', 'happy', 'surprised', 'sad', 'angry']
const FRONTEND_ACTIONS = ['idle', 'wave', 'greet', 'think', 'nod', 'shakeHead', 'dance', 'speak', 'waveHand', 'raiseHand']

// The frontend's character presets (src/core/dialogue/characterPresets.ts) and the character of
// Triad's each one must reach (docs/avatar-protocol.md): the mock greets with the name.
const CHARACTERS: { id: string; name: Record<Language, string> }[] = [
  { id: 'lively-assistant', name: { en: 'Aria', 'zh-CN': '小雅' } },
  { id: 'serious-advisor', name: { en: 'Dr. Morgan', 'zh-CN': '莫根博士' } },
  { id: 'cute-companion', name: { en: 'Mimi', 'zh-CN': '咪咪' } },
  { id: 'pro-service', name: { en: 'Alex', 'zh-CN': '小安' } },
]
const GREETING: Record<Language, string> = { 'zh-CN': '你好！', en: 'Hello!' }
const HAN = /\p{Script=Han}/u

// One browser, one Triad, one page for the whole file; torn down in reverse order at the end.
const cleanups: (() => Promise<void> | void)[] = []
const cleanup: Cleanup = { after: (fn) => cleanups.push(fn) }
let triad: { api: string; ws: string }
let page: Page
let complaints: string[] = []

before(async () => {
  if (chromiumSkipReason()) return
  const browser = await launchChromium()
  cleanup.after(() => browser.close())
  triad = await startTriad(cleanup)
  const origin = await serveFixture(cleanup)
  assert.notEqual(new URL(origin).origin, new URL(triad.api).origin)
  page = await openClient(browser, origin)
})
after(async () => {
  for (const fn of cleanups.reverse()) await fn()
})

async function listening(server: Server | FastifyInstance['server']): Promise<number> {
  if (!server.listening) await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

/** Triad as `npm start` runs it (all three services, default configuration), on a real socket. */
async function startTriad(t: Cleanup) {
  const { app } = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = await listening(app.server)
  return { api: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}` }
}

/** The fixture page on a second port of 127.0.0.1: another origin, so every call is cross-origin. */
async function serveFixture(t: Cleanup): Promise<string> {
  const types: Record<string, string> = { 'client.html': 'text/html; charset=utf-8', 'client.js': 'text/javascript; charset=utf-8' }
  const server = createServer((request, response) => {
    const name = new URL(request.url ?? '/', 'http://fixture').pathname.slice(1)
    const type = types[name]
    if (!type) {
      response.writeHead(404).end()
      return
    }
    readFile(new URL(name, FIXTURE)).then(
      (content) => response.writeHead(200, { 'content-type': type }).end(content),
      () => response.writeHead(500).end(),
    )
  }).listen(0, '127.0.0.1')
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${await listening(server)}`
}

/** The fixture page, pointed at Triad; what the browser itself complains of (CORS refusals) is kept. */
async function openClient(browser: Browser, origin: string): Promise<Page> {
  const page = await browser.newPage()
  page.on('pageerror', (error) => complaints.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error') complaints.push(message.text())
  })
  await page.goto(`${origin}/client.html?${new URLSearchParams(triad)}`)
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector('#state')?.textContent === 'ready')
  return page
}

/** Calls one of the fixture client's functions in the page and returns what it observed. */
function call<Name extends keyof Client>(page: Page, name: Name, ...args: Parameters<Client[Name]>): Promise<Awaited<ReturnType<Client[Name]>>> {
  return page.evaluate(
    ([name, args]) => {
      const client = (globalThis as unknown as PageGlobals).metaHumanClient
      return (client[name] as (...args: unknown[]) => unknown)(...args)
    },
    [name, args] as const,
  ) as Promise<Awaited<ReturnType<Client[Name]>>>
}

/** The reply a turn observed, whatever the transport, after the transport's own checks. */
function replyOf(transport: Transport, seen: Observed, context: string): Reply {
  assert.equal(seen.networkError, undefined, `${context}: the browser refused the call`)
  if (transport === 'http') {
    assert.equal(seen.status, 200, `${context}: ${JSON.stringify(seen.body)}`)
    return seen.body as Reply
  }
  if (transport === 'sse') {
    assert.equal(seen.status, 200, `${context}: ${JSON.stringify(seen.body)}`)
    assert.match(seen.contentType ?? '', /^text\/event-stream/, context)
    // Keep-alive comments are ignored by the frontend, which is fine; any other piece its parser
    // skips (an event after a comment in the same piece, say) or cannot read would be lost.
    const comment = (piece: string) => piece.split('\n').every((line) => line.startsWith(':'))
    assert.deepEqual(seen.ignored?.filter((piece) => !comment(piece)), [], `${context}: pieces the frontend's parser skips`)
    assert.deepEqual(seen.unparsable, [], context)
  } else {
    assert.equal(seen.opened, true, `${context}: the WebSocket handshake failed (${JSON.stringify(seen.closed)})`)
    assert.equal(seen.timedOut, undefined, `${context}: no done or error frame within 10 s`)
    assert.deepEqual(seen.unparsable, [], context)
  }
  assert.equal(seen.error, null, `${context}: error event`)
  assert.ok(seen.done, `${context}: no done event`)
  // Streamed for real: the frontend shows the text as it grows.
  assert.ok((seen.tokens?.length ?? 0) >= 2, `${context}: ${seen.tokens?.length} token(s)`)
  assert.equal(seen.tokens?.join(''), seen.done.replyText, `${context}: the tokens join to replyText`)
  return seen.done
}

/** The browser's complaints since the last call (each test starts clean and must end clean). */
function takeComplaints(): string[] {
  const taken = complaints
  complaints = []
  return taken
}

/** A session with one exchange, made directly (no browser), for the page to delete. */
async function sessionWithAMessage(): Promise<string> {
  const sessionId = await call(page, 'newSessionId')
  const response = await fetch(`${triad.api}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId, userText: 'Hello!' }) })
  assert.equal(response.status, 200)
  return sessionId
}

const historyStatus = async (sessionId: string) => (await fetch(`${triad.api}/v1/session/${sessionId}/history`)).status

describe('the meta-human frontend protocol, cross-origin in Chromium', { skip: chromiumSkipReason() }, () => {
  it('is online: GET /health answers 200 with the reference backend\'s fields to the frontend\'s origin', async () => {
    takeComplaints()
    const health = await call(page, 'health')
    assert.equal(health.networkError, undefined, `GET /health refused: ${takeComplaints().join(' | ')}`)
    assert.equal(health.status, 200, JSON.stringify(health.body))
    const body = health.body as { status: unknown; uptime_seconds: unknown; version: unknown; services: Record<string, unknown> }
    assert.equal(body.status, 'ok')
    assert.equal(typeof body.uptime_seconds, 'number')
    assert.equal(typeof body.version, 'string')
    for (const service of ['chat', 'llm', 'tts', 'asr']) assert.equal(typeof body.services?.[service], 'string', `services.${service}`)
    assert.deepEqual(takeComplaints(), [])
  })

  it('finds the WebSocket transport with the probe of its auto mode', async () => {
    takeComplaints()
    assert.equal(await call(page, 'probeWebSocket'), true, `the WebSocket probe did not open: ${takeComplaints().join(' | ')}`)
    assert.deepEqual(takeComplaints(), [])
  })

  const transports: Transport[] = ['http', 'sse', 'websocket']
  for (const [transportIndex, transport] of transports.entries()) {
    it(`chats over ${transport} as each of the frontend's characters, in its language, into the session it names`, async () => {
      takeComplaints()
      const sessionId = await call(page, 'newSessionId')
      for (const [characterIndex, character] of CHARACTERS.entries()) {
        // Over the three transports every character is greeted in both languages.
        const language: Language = (transportIndex + characterIndex) % 2 === 0 ? 'zh-CN' : 'en'
        const turn = { sessionId, userText: GREETING[language], language, characterId: character.id }
        const seen = await call(page, 'chat', transport, turn)
        const browserSaid = takeComplaints()
        const context = `${transport}, ${character.id}, ${language}${browserSaid.length ? ` (the browser: ${browserSaid.join(' | ')})` : ''}`
        const reply = replyOf(transport, seen, context)
        assert.ok(reply.replyText.includes(character.name[language]), `${context}: "${reply.replyText}" is not ${character.name[language]}`)
        assert.equal(HAN.test(reply.replyText), language === 'zh-CN', `${context}: answered in the wrong language: "${reply.replyText}"`)
        assert.ok(FRONTEND_EMOTIONS.includes(reply.emotion), `${context}: emotion ${reply.emotion}`)
        assert.ok(FRONTEND_ACTIONS.includes(reply.action), `${context}: action ${reply.action}`)
      }
      const history = await fetch(`${triad.api}/v1/session/${sessionId}/history`)
      assert.equal(history.status, 200, `session ${sessionId} was not kept`)
      const { messages } = (await history.json()) as { messages: { role: string }[] }
      assert.deepEqual(messages.map((message) => message.role), CHARACTERS.flatMap(() => ['user', 'assistant']))
      assert.deepEqual(takeComplaints(), [])
    })
  }

  it('deletes the old session on "new session" (a preflighted DELETE), also one that never had a message', async () => {
    takeComplaints()
    const used = await sessionWithAMessage()
    assert.equal(await historyStatus(used), 200)
    const deleted = await call(page, 'deleteSession', used)
    assert.equal(deleted.networkError, undefined, `DELETE refused: ${takeComplaints().join(' | ')}`)
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body))
    // The reference backend's `{cleared}` (the frontend itself ignores the answer).
    assert.equal((deleted.body as { cleared?: unknown }).cleared, true)
    assert.equal(await historyStatus(used), 404, 'the session survived its DELETE')

    const unused = await call(page, 'newSessionId')
    const deletedUnused = await call(page, 'deleteSession', unused)
    assert.equal(deletedUnused.networkError, undefined, `DELETE refused: ${takeComplaints().join(' | ')}`)
    assert.equal(deletedUnused.status, 200, JSON.stringify(deletedUnused.body))
    assert.equal((deletedUnused.body as { cleared?: unknown }).cleared, false)
    assert.deepEqual(takeComplaints(), [])
  })
})
