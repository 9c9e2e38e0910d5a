import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError } from '../../../src/config.ts'
import { buildTestApp, engineIndependent, testConfig } from '../../helpers/build-app.ts'
import { readStream } from './helpers.ts'
import type { FastifyInstance } from 'fastify'

const FRONT_END = 'http://localhost:5173'

function preflight(app: FastifyInstance, url: string, method: string, origin = FRONT_END, headers = 'content-type') {
  return app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } })
}

function listed(header: unknown): string[] {
  return String(header ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean)
}

describe('CORS on the avatar API', { skip: engineIndependent }, () => {
  it('lets any origin call it by default: preflights allow every avatar method and the headers clients send', async (t) => {
    const { app } = await buildTestApp(t, { env: { AVATAR_RATE_LIMIT: '0' } })
    for (const [url, method] of [
      ['/v1/chat', 'POST'],
      ['/v1/chat/stream', 'POST'],
      ['/v1/session/new-conversation', 'DELETE'],
      ['/v1/session/x/history', 'GET'],
      ['/v1/tts', 'POST'],
      ['/v1/asr', 'POST'],
      ['/health', 'GET'],
    ]) {
      const response = await preflight(app, url, method, FRONT_END, 'content-type,x-api-key,authorization')
      assert.equal(response.statusCode, 204, url)
      assert.equal(response.headers['access-control-allow-origin'], '*', url)
      assert.equal(response.headers['access-control-allow-credentials'], undefined, url)
      for (const allowed of ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS']) assert.ok(listed(response.headers['access-control-allow-methods']).includes(allowed.toLowerCase()), `${url} ${allowed}`)
      for (const header of ['content-type', 'x-api-key', 'authorization']) assert.ok(listed(response.headers['access-control-allow-headers']).includes(header), `${url} ${header}`)
      assert.equal(response.body, '')
    }

    // The answers themselves are readable by the page, with the headers it may want.
    const chat = await app.inject({ method: 'POST', url: '/v1/chat', headers: { origin: FRONT_END }, payload: { userText: 'hi', meta: { characterId: 'serious-advisor' } } })
    assert.equal(chat.statusCode, 200)
    assert.equal(chat.headers['access-control-allow-origin'], '*')
    for (const header of ['x-avatar-persona', 'x-avatar-persona-unknown', 'x-request-id', 'retry-after', 'x-ratelimit-remaining']) {
      assert.ok(listed(chat.headers['access-control-expose-headers']).includes(header), header)
    }
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/session/never-chatted', headers: { origin: FRONT_END } })
    assert.equal(deleted.statusCode, 200)
    assert.equal(deleted.headers['access-control-allow-origin'], '*')
    const health = await app.inject({ method: 'GET', url: '/health', headers: { origin: FRONT_END } })
    assert.equal(health.headers['access-control-allow-origin'], '*')
  })

  it('opens the event stream to other origins, with the headers it exposes', async (t) => {
    const { app } = await buildTestApp(t, { env: { AVATAR_RATE_LIMIT: '0', AVATAR_MOCK_TOKEN_DELAY: '0ms' } })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const { response, events } = await readStream(address, { userText: 'hello', meta: { characterId: 'pro-service' } }, { headers: { origin: FRONT_END } })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('access-control-allow-origin'), '*')
    assert.match(String(response.headers.get('access-control-expose-headers')), /X-Avatar-Persona/)
    assert.equal(response.headers.get('x-avatar-persona'), 'service')
    assert.equal(events.at(-1)?.type, 'done')
  })

  it('makes errors readable across origins too (a 400, a 404, a 429)', async (t) => {
    // The refused request counts too: two per minute leaves one for the reply.
    const { app } = await buildTestApp(t, { env: { AVATAR_RATE_LIMIT: '2/min' } })
    const send = (payload: object) => app.inject({ method: 'POST', url: '/v1/chat', headers: { origin: FRONT_END }, payload })
    const bad = await send({})
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.headers['access-control-allow-origin'], '*')
    assert.equal((await send({ userText: 'hi' })).statusCode, 200)
    const limited = await send({ userText: 'hi' })
    assert.equal(limited.statusCode, 429)
    assert.equal(limited.headers['access-control-allow-origin'], '*')
    const missing = await app.inject({ method: 'GET', url: '/v1/session/none/history', headers: { origin: FRONT_END } })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.headers['access-control-allow-origin'], '*')
  })

  it('allows only the listed origins when AVATAR_CORS_ORIGINS names some', async (t) => {
    const { app } = await buildTestApp(t, { env: { AVATAR_CORS_ORIGINS: 'https://avatar.example.org, http://localhost:5173' } })
    const allowed = await preflight(app, '/v1/session/abc', 'DELETE')
    assert.equal(allowed.statusCode, 204)
    assert.equal(allowed.headers['access-control-allow-origin'], FRONT_END)
    assert.match(String(allowed.headers.vary), /Origin/)
    assert.ok(listed(allowed.headers['access-control-allow-methods']).includes('delete'))

    const other = await preflight(app, '/v1/session/abc', 'DELETE', 'https://elsewhere.example')
    assert.equal(other.headers['access-control-allow-origin'], undefined)
    assert.equal(other.headers['access-control-allow-methods'], undefined)
    const read = await app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://elsewhere.example' } })
    assert.equal(read.statusCode, 200)
    assert.equal(read.headers['access-control-allow-origin'], undefined)
    assert.match(String(read.headers.vary), /Origin/)
    assert.equal((await app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://avatar.example.org' } })).headers['access-control-allow-origin'], 'https://avatar.example.org')
  })

  it('refuses an AVATAR_CORS_ORIGINS that is not * or a list of origins', () => {
    for (const value of ['localhost:5173', 'https://a.example/path', 'https://a.example,,x']) {
      assert.throws(() => testConfig({ AVATAR_CORS_ORIGINS: value }), ConfigError, value)
    }
    assert.deepEqual(testConfig({ AVATAR_CORS_ORIGINS: ' https://a.example , http://127.0.0.1:3000 ' }).avatar.corsOrigins, ['https://a.example', 'http://127.0.0.1:3000'])
    assert.deepEqual(testConfig().avatar.corsOrigins, ['*'])
  })

  it("keeps its own rules when CORS_ORIGINS opens the server's credentialed CORS (no more GET, HEAD, POST-only preflights)", async (t) => {
    const { app } = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://ui.example.org' } })
    const avatar = await preflight(app, '/v1/session/abc', 'DELETE')
    assert.equal(avatar.statusCode, 204)
    assert.equal(avatar.headers['access-control-allow-origin'], '*')
    assert.equal(avatar.headers['access-control-allow-credentials'], undefined)
    assert.ok(listed(avatar.headers['access-control-allow-methods']).includes('delete'))
    const health = await app.inject({ method: 'HEAD', url: '/health', headers: { origin: FRONT_END } })
    assert.equal(health.headers['access-control-allow-origin'], '*')
    assert.equal(health.headers['access-control-allow-credentials'], undefined)

    // Paths of no service are still the root's business.
    const root = await app.inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://ui.example.org' } })
    assert.equal(root.headers['access-control-allow-origin'], 'https://ui.example.org')
    assert.equal(root.headers['access-control-allow-credentials'], 'true')
  })
})

describe('other services’ CORS, unchanged by the avatar’s', { skip: engineIndependent }, () => {
  it('authn: credentials for its allowed origins, 403 for others, its own preflight', async (t) => {
    const { app } = await buildTestApp(t, { env: { AUTHN_ALLOWED_ORIGINS: 'https://ui.example.org' } })
    const allowed = await app.inject({ method: 'GET', url: '/server/api/authn/status', headers: { origin: 'https://ui.example.org' } })
    assert.equal(allowed.statusCode, 200)
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://ui.example.org')
    assert.equal(allowed.headers['access-control-allow-credentials'], 'true')
    const foreign = await app.inject({ method: 'GET', url: '/server/api/authn/status', headers: { origin: FRONT_END } })
    assert.equal(foreign.statusCode, 403)
    assert.equal(foreign.headers['access-control-allow-origin'], undefined)
    const authnPreflight = await preflight(app, '/server/api/eperson/epersons/x', 'PATCH', 'https://ui.example.org')
    assert.equal(authnPreflight.statusCode, 204)
    assert.match(String(authnPreflight.headers['access-control-allow-headers']), /X-On-Behalf-Of/)
    assert.doesNotMatch(String(authnPreflight.headers['access-control-allow-headers']), /X-API-Key/)
  })

  it('payments: the merchant API stays closed to pages, the client API open with its own preflight', async (t) => {
    const { app } = await buildTestApp(t)
    const merchant = await app.inject({ method: 'GET', url: '/me', headers: { origin: FRONT_END } })
    assert.equal(merchant.headers['access-control-allow-origin'], undefined)
    const merchantPreflight = await preflight(app, '/merchants', 'POST')
    assert.notEqual(merchantPreflight.statusCode, 204)
    assert.equal(merchantPreflight.headers['access-control-allow-origin'], undefined)
    const client = await preflight(app, '/vault', 'POST', FRONT_END, 'accept-version,content-type')
    assert.equal(client.statusCode, 204)
    assert.equal(client.headers['access-control-allow-origin'], '*')
    assert.equal(client.headers['access-control-allow-methods'], 'POST, OPTIONS')
    assert.match(String(client.headers['access-control-allow-headers']), /Accept-Version/)
  })
})
