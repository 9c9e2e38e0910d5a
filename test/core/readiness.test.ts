import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLifecycle } from '../../src/core/http/lifecycle.ts'
import { buildTestApp, createTestDatabase } from '../helpers/build-app.ts'
import { freePort } from '../helpers/free-port.ts'

describe('readiness', () => {
  it('fails with 503 naming the database when it is unreachable, while /healthz stays up', async (t) => {
    const database = await createTestDatabase(t)
    const { app } = await buildTestApp(t, { database })
    await database.destroy()
    const ready = await app.inject('/readyz')
    assert.equal(ready.statusCode, 503)
    assert.equal(ready.json().error.code, 'service_unavailable')
    assert.deepEqual(ready.json().error.details, [{ check: 'database', state: 'unreachable' }])
    assert.equal((await app.inject('/healthz')).statusCode, 200)
  })

  it('stays ready when Redis is configured and unreachable, naming it in checks (rate limits count in memory meanwhile)', async (t) => {
    const port = await freePort()
    const { app } = await buildTestApp(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}` }, services: ['avatar'] })
    const started = performance.now()
    const ready = await app.inject('/readyz')
    assert.ok(performance.now() - started < 500, 'nothing waits for a reconnect')
    assert.equal(ready.statusCode, 200)
    assert.deepEqual(ready.json().checks, { shutdown: 'ok', database: 'ok', redis: 'unreachable' })
    assert.equal((await app.inject('/healthz')).statusCode, 200)
  })

  it('fails with 503 naming the shutdown once draining starts', async (t) => {
    const lifecycle = createLifecycle()
    const { app } = await buildTestApp(t, { lifecycle })
    assert.equal((await app.inject('/readyz')).statusCode, 200)
    lifecycle.startDraining()
    const ready = await app.inject('/readyz')
    assert.equal(ready.statusCode, 503)
    assert.deepEqual(ready.json().error.details, [{ check: 'shutdown', state: 'draining' }])
    assert.equal((await app.inject('/healthz')).statusCode, 200)
  })
})
