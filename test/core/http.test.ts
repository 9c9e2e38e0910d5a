import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { AppError } from '../../src/core/errors/app-error.ts'
import { buildServer } from '../../src/core/http/build-server.ts'
import { applyPage, pageQuerySchema } from '../../src/core/http/pagination.ts'
import { createManualClock } from '../../src/core/clock.ts'
import { createIdGenerator } from '../../src/core/ids.ts'
import { buildTestApp, createTestDatabase } from '../helpers/build-app.ts'

function server() {
  return buildServer({ logLevel: 'silent', trustProxy: [], corsOrigins: [], version: '0.0.0', description: 'test' })
}

describe('HTTP core', () => {
  it('parses form bodies with bracket nesting and yes/no booleans where the schema says boolean', async (t) => {
    const app = await server()
    t.after(() => app.close())
    const Body = Type.Object({
      name: Type.String(),
      test: Type.Optional(Type.Boolean()),
      amount: Type.Optional(Type.Integer()),
      company: Type.Object({ country: Type.String(), number: Type.Optional(Type.String()) }),
    })
    app.post('/echo', { schema: { body: Body } }, async (request) => request.body)
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=yes&test=yes&amount=995&company[country]=DK&company[number]=07654321',
    })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { name: 'yes', test: true, amount: 995, company: { country: 'DK', number: '07654321' } })
    const no = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=a&test=no&company[country]=SE',
    })
    assert.equal(no.json().test, false)
  })

  it('accepts application/vnd.api+json as JSON', async (t) => {
    const app = await server()
    t.after(() => app.close())
    app.post('/echo', { schema: { body: Type.Object({ a: Type.Integer() }) } }, async (request) => request.body)
    const response = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/vnd.api+json' }, payload: '{"a":1}' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { a: 1 })
  })

  it('answers validation failures with 400 and every bad field, malformed JSON with 400', async (t) => {
    const app = await server()
    t.after(() => app.close())
    app.post('/echo', { schema: { body: Type.Object({ a: Type.Integer(), b: Type.String({ minLength: 2 }) }) } }, async (request) => request.body)
    const invalid = await app.inject({ method: 'POST', url: '/echo', payload: { a: 'x', b: 'y' } })
    assert.equal(invalid.statusCode, 400)
    const body = invalid.json()
    assert.equal(body.error.code, 'validation_failed')
    assert.deepEqual(body.error.details.map((problem: { field: string }) => problem.field).sort(), ['a', 'b'])
    const malformed = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' })
    assert.equal(malformed.statusCode, 400)
    assert.equal(malformed.json().error.code, 'bad_request')
  })

  it('hides the internals of an unexpected error behind a generic 500', async (t) => {
    const app = await server()
    t.after(() => app.close())
    app.get('/boom', async () => {
      throw new Error('secret connection string postgres://admin:hunter2@db')
    })
    app.get('/teapot', async () => {
      throw new AppError('conflict', 'The resource changed meanwhile', { status: 409, headers: { 'retry-after': '1' } })
    })
    const boom = await app.inject('/boom')
    assert.equal(boom.statusCode, 500)
    assert.deepEqual(Object.keys(boom.json().error).sort(), ['code', 'message', 'requestId'])
    assert.equal(boom.json().error.message, 'Internal server error')
    assert.doesNotMatch(boom.body, /hunter2/)
    const conflict = await app.inject('/teapot')
    assert.equal(conflict.statusCode, 409)
    assert.equal(conflict.headers['retry-after'], '1')
    assert.equal(conflict.json().error.message, 'The resource changed meanwhile')
  })

  it('gives every response a request id, keeping a sane incoming one', async (t) => {
    const app = await server()
    t.after(() => app.close())
    app.get('/', async () => ({}))
    const generated = await app.inject('/')
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/)
    const kept = await app.inject({ url: '/', headers: { 'x-request-id': 'edge-1234' } })
    assert.equal(kept.headers['x-request-id'], 'edge-1234')
    const replaced = await app.inject({ url: '/', headers: { 'x-request-id': 'bad id\twith spaces' } })
    assert.notEqual(replaced.headers['x-request-id'], 'bad id\twith spaces')
  })

  it('allows the configured CORS origins only', async (t) => {
    const app = await buildServer({ logLevel: 'silent', trustProxy: [], corsOrigins: ['https://app.example.org'], version: '0', description: '' })
    t.after(() => app.close())
    app.get('/', async () => ({}))
    const allowed = await app.inject({ url: '/', headers: { origin: 'https://app.example.org' } })
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.org')
    const other = await app.inject({ url: '/', headers: { origin: 'https://evil.example' } })
    assert.equal(other.headers['access-control-allow-origin'], undefined)
  })
})

describe('cursor pagination', () => {
  it('lists newest first, pages with before, reverses with after, and treats both as an open interval', async (t) => {
    const database = await createTestDatabase(t)
    await database.db.schema
      .createTable('items')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .execute()
    const clock = createManualClock('2026-01-01T00:00:00Z')
    const ids = createIdGenerator(clock)
    const created: string[] = []
    for (let n = 0; n < 7; n++) {
      created.push(ids.timeOrdered())
      clock.advance(1000)
    }
    await database.db
      .insertInto('items')
      .values(created.map((id) => ({ id })))
      .execute()
    const page = async (request: { limit: number; before?: string; after?: string }) =>
      (await applyPage(database.db.selectFrom('items').select('id'), 'id', request).execute()).map((row) => row.id as string)
    const newest = [...created].reverse()
    assert.deepEqual(await page({ limit: 3 }), newest.slice(0, 3))
    assert.deepEqual(await page({ limit: 3, before: newest[2] }), newest.slice(3, 6))
    assert.deepEqual(await page({ limit: 2, after: created[1] }), created.slice(2, 4))
    assert.deepEqual(await page({ limit: 10, after: created[1], before: created[5] }), [created[4], created[3], created[2]])
  })

  it('requires limit where the API says so and bounds it', async (t) => {
    const app = await server()
    t.after(() => app.close())
    app.get('/required', { schema: { querystring: pageQuerySchema({ required: true, max: 1000 }) } }, async (request) => request.query)
    app.get('/optional', { schema: { querystring: pageQuerySchema({ required: false, max: 100, defaultLimit: 20 }) } }, async (request) => request.query)
    assert.equal((await app.inject('/required')).statusCode, 400)
    assert.equal((await app.inject('/required?limit=0')).statusCode, 400)
    assert.equal((await app.inject('/required?limit=1001')).statusCode, 400)
    assert.deepEqual((await app.inject('/required?limit=5&before=abc')).json(), { limit: 5, before: 'abc' })
    assert.deepEqual((await app.inject('/optional')).json(), { limit: 20 })
  })
})

describe('health, readiness and docs', () => {
  it('answers /healthz, /readyz and serves the OpenAPI document and its UI', async (t) => {
    const { app } = await buildTestApp(t)
    const health = await app.inject('/healthz')
    assert.equal(health.statusCode, 200)
    assert.deepEqual(health.json(), { status: 'ok' })
    const ready = await app.inject('/readyz')
    assert.equal(ready.statusCode, 200)
    assert.equal(ready.json().status, 'ready')
    const docs = await app.inject('/docs/json')
    assert.equal(docs.statusCode, 200)
    assert.equal(docs.json().openapi, '3.1.0')
    assert.ok(docs.json().paths['/healthz'])
    const ui = await app.inject('/docs')
    assert.equal(ui.statusCode, 200)
    assert.match(ui.headers['content-type'] ?? '', /text\/html/)
    assert.match(ui.body, /swagger-ui/i)
  })

  it('reports 503 from /readyz when the database is unreachable, while /healthz stays up', async (t) => {
    const database = await createTestDatabase(t)
    const { app } = await buildTestApp(t, { database })
    await sql`select 1`.execute(database.db)
    await database.destroy()
    const ready = await app.inject('/readyz')
    assert.equal(ready.statusCode, 503)
    assert.deepEqual(ready.json().error.details, [{ check: 'database', state: 'unreachable' }])
    assert.equal((await app.inject('/healthz')).statusCode, 200)
  })

  it('mounts only the services asked for, each with its own error body', async (t) => {
    const { app } = await buildTestApp(t, { services: ['avatar'] })
    const avatar = await app.inject('/v1/nothing-here')
    assert.equal(avatar.statusCode, 404)
    assert.equal(typeof avatar.json().detail, 'string')
    // Served alone, the avatar owns the whole server: authn's paths are nobody's here.
    const authn = await app.inject('/api/authn/status')
    assert.equal(authn.statusCode, 404)
    assert.deepEqual(authn.json(), { detail: 'No route for GET /api/authn/status' })
    const { app: two } = await buildTestApp(t, { services: ['avatar', 'payments'] })
    const unclaimed = await two.inject('/api/authn/status')
    assert.equal(unclaimed.statusCode, 404)
    assert.equal(unclaimed.json().error.code, 'not_found')
  })
})
