import assert from 'node:assert/strict'
import { once } from 'node:events'
import { describe, it } from 'node:test'
import WebSocket from 'ws'
import type { FastifyInstance } from 'fastify'
import { ConfigError } from '../../../../src/core/config/load-config.ts'
import { testConfig, type Cleanup } from '../../../helpers/build-app.ts'
import { buildAvatarApp, listenToEvents } from '../helpers.ts'

const KEY = 'operator-key-0123456789'
const auth = { authorization: `Bearer ${KEY}` }

function operatorApp(t: Cleanup, env: Record<string, string> = {}) {
  return buildAvatarApp(t, { env: { AVATAR_OPERATOR_KEY: KEY, ...env } })
}

function post(app: FastifyInstance, path: string, payload: unknown, headers: Record<string, string> = auth) {
  return app.inject({ method: 'POST', url: path, payload: payload as object, headers })
}

async function listen(app: FastifyInstance) {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  assert.ok(address && typeof address === 'object')
  return `http://127.0.0.1:${address.port}`
}

describe('the operator routes refuse who may not use them', () => {
  it('answers 404 naming AVATAR_OPERATOR_KEY when no key is configured', async (t) => {
    const { app } = await buildAvatarApp(t)
    for (const path of ['/v1/session/s1/say', '/v1/session/s1/act']) {
      const response = await post(app, path, { text: 'hi', emotion: 'happy' })
      assert.equal(response.statusCode, 404)
      assert.deepEqual(response.json(), {
        detail: 'The operator channel is off on this server: set AVATAR_OPERATOR_KEY to enable POST /v1/session/{session_id}/say and /act',
      })
    }
  })

  it('answers 401 without the key and 403 with a wrong one, in {detail}', async (t) => {
    const { app } = await operatorApp(t)
    const missing = await post(app, '/v1/session/s1/say', { text: 'hi' }, {})
    assert.equal(missing.statusCode, 401)
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="avatar-operator"')
    assert.match(missing.json().detail, /operator key is required/)
    const wrong = await post(app, '/v1/session/s1/act', { emotion: 'sad' }, { authorization: 'Bearer not-the-key-at-all' })
    assert.equal(wrong.statusCode, 403)
    assert.deepEqual(wrong.json(), { detail: 'The operator key is not valid' })
    const history = await app.inject({ method: 'GET', url: '/v1/session/s1/history' })
    assert.equal(history.statusCode, 404, 'nothing was stored')
  })

  it('refuses a short AVATAR_OPERATOR_KEY at start', () => {
    assert.throws(() => testConfig({ AVATAR_OPERATOR_KEY: 'short' }), ConfigError)
    assert.throws(() => testConfig({ AVATAR_OPERATOR_RATE_LIMIT: 'often' }), ConfigError)
  })

  it('rate-limits operator requests per client (AVATAR_OPERATOR_RATE_LIMIT), wrong keys included', async (t) => {
    const { app } = await operatorApp(t, { AVATAR_OPERATOR_RATE_LIMIT: '2/min' })
    const remoteAddress = '10.9.8.7'
    const send = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/v1/session/s1/act', payload: { action: 'wave' }, headers, remoteAddress })
    assert.equal((await send(auth)).statusCode, 200)
    assert.equal((await send({ authorization: 'Bearer guess-guess-guess-1' })).statusCode, 403)
    const refused = await send(auth)
    assert.equal(refused.statusCode, 429)
    assert.ok(Number(refused.headers['retry-after']) >= 1)
    assert.match(refused.json().detail, /^Rate limit exceeded\. Try again in \d+ seconds\.$/)
  })

  it('answers 400 for a bad body, naming the field', async (t) => {
    const { app } = await operatorApp(t)
    const cases: Array<[string, unknown, RegExp]> = [
      ['/v1/session/s1/say', {}, /text/],
      ['/v1/session/s1/say', { text: '' }, /text must not be empty/],
      ['/v1/session/s1/say', { text: 'hi', emotion: 'bored' }, /^emotion must be one of neutral, happy, surprised, sad, angry$/],
      ['/v1/session/s1/say', { text: '   ' }, /^text must not be only blanks$/],
      ['/v1/session/s1/say', { text: 'hi', voice: 'nobody' }, /^voice must be one of zh-CN-XiaoxiaoNeural, /],
      ['/v1/session/s1/say', { text: 'hi', extra: 1 }, /^extra is not an accepted field$/],
      ['/v1/session/s1/act', {}, /act needs an emotion, an action or both/],
      ['/v1/session/s1/act', { action: 'fly' }, /^action must be one of idle, /],
      ['/v1/session/bad id/act', { action: 'wave' }, /session_id/],
    ]
    for (const [path, body, detail] of cases) {
      const response = await post(app, path.replace(' ', '%20'), body)
      assert.equal(response.statusCode, 400, `${path} ${JSON.stringify(body)}`)
      assert.match(response.json().detail, detail)
    }
  })
})

describe('say and act', () => {
  it('keeps what the operator made the avatar say in the history, marked as the operator\'s', async (t) => {
    const { app } = await operatorApp(t)
    await app.inject({ method: 'POST', url: '/v1/chat', payload: { sessionId: 'ops-1', userText: 'Hello' } })
    const said = await post(app, '/v1/session/ops-1/say', { text: 'An operator speaks now.', emotion: 'happy', action: 'wave', voice: 'en-US-GuyNeural' })
    assert.equal(said.statusCode, 200)
    const body = said.json()
    assert.equal(body.delivered, true)
    assert.equal(body.event.type, 'say')
    assert.equal(body.event.voice, 'en-US-GuyNeural')
    const history = (await app.inject({ method: 'GET', url: '/v1/session/ops-1/history' })).json()
    assert.deepEqual(
      history.messages.map((message: { role: string; content: string; emotion?: string; action?: string }) => [message.role, message.emotion, message.action]),
      [
        ['user', undefined, undefined],
        ['assistant', history.messages[1].emotion, history.messages[1].action],
        ['operator', 'happy', 'wave'],
      ],
    )
    assert.equal(history.messages[2].content, 'An operator speaks now.')
    // Without emotion and action the avatar speaks with a neutral face.
    const plain = (await post(app, '/v1/session/ops-2/say', { text: 'Plain.' })).json()
    assert.equal(plain.event.emotion, 'neutral')
    assert.equal(plain.event.action, 'speak')
  })

  it('delivers say and act to every event stream and WebSocket of the session, and to no other', async (t) => {
    const { app } = await operatorApp(t)
    const base = await listen(app)
    const first = await listenToEvents(base, 'live-1')
    const second = await listenToEvents(base, 'live-1')
    const other = await listenToEvents(base, 'live-2')
    t.after(() => [first, second, other].forEach((listener) => listener.close()))
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws?session_id=live-1`)
    t.after(() => socket.close())
    await once(socket, 'open')
    const frames: unknown[] = []
    // Without Redis the socket's listener is in place when its handshake completes.
    socket.on('message', (data) => frames.push(JSON.parse(String(data))))

    const said = (await post(app, '/v1/session/live-1/say', { text: 'Now!', emotion: 'surprised', action: 'greet' })).json()
    const acted = (await post(app, '/v1/session/live-1/act', { emotion: 'angry' })).json()
    for (const listener of [first, second]) {
      assert.deepEqual(await listener.next(), said.event)
      assert.deepEqual(await listener.next(), acted.event)
    }
    assert.deepEqual(acted.event, { type: 'act', id: acted.event.id, emotion: 'angry', at: acted.event.at })
    await assert.rejects(other.next(200), /no event/)
    for (let attempt = 0; attempt < 100 && frames.length < 2; attempt++) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.deepEqual(frames, [said.event, acted.event])
  })
})
