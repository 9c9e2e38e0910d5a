import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { REQUEST_DATABASE_BUDGET_MS } from '../../src/core/db/deadline.ts'
import { databaseFaultOf } from '../../src/core/db/errors.ts'
import type { LlmPort } from '../../src/services/avatar/providers/llm/llm.port.ts'
import { buildTestApp, testDialect } from '../helpers/build-app.ts'
import { errorShapes } from '../helpers/error-shapes.ts'
import { faultyDatabase } from '../helpers/faulty-database.ts'
import { authorizeOverHttp } from '../helpers/http-clients.ts'

// Database faults at runtime, one at a time, answered through HTTP (issue 25 §3). The same faults
// under load are in postgres-runtime.test.ts.
const skip = testDialect === 'postgres' ? false : 'the fault proxy stands in front of PostgreSQL (TEST_DATABASE_URL)'

const basic = (key: string) => `Basic ${Buffer.from(`:${key}`).toString('base64')}`
const json = { 'content-type': 'application/json' }

async function listeningApp(t: Parameters<typeof buildTestApp>[0]) {
  const faulty = await faultyDatabase(t)
  const { app } = await buildTestApp(t, { database: faulty.database, env: { AVATAR_MOCK_TOKEN_DELAY: '0s', AVATAR_RATE_LIMIT: '0', PAYMENTS_RATE_LIMIT: '0' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  return { ...faulty, app, base }
}

describe('PostgreSQL faults, one request at a time', { skip }, () => {
  it('a connection lost while a transaction holds it fails that transaction and does not end the process', async (t) => {
    const { database, proxy } = await faultyDatabase(t)
    const outcome = database.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx)
      // The client is checked out and idle between statements: its socket error has no query to fail.
      proxy.resetConnections()
      await sleep(100)
      await sql`select 1`.execute(trx)
    })
    await assert.rejects(outcome, (error) => databaseFaultOf(error) === 'unavailable')
    await sleep(50)
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows[0]?.one, 1, 'the pool reconnects')
  })

  it("answers 503 with Retry-After in each service's own shape while the database is down", async (t) => {
    const { proxy, base } = await listeningApp(t)
    const { appKey, merchantKey, transactionId } = await authorizeOverHttp(base, 1000)
    const vault = async (type: string, value: string) => {
      const response = await fetch(`${base}/vault`, { method: 'POST', headers: { ...json, 'accept-version': '1' }, body: JSON.stringify({ type, value }) })
      return ((await response.json()) as { token: string }).token
    }
    const payment = {
      integration: { key: merchantKey },
      amount: { currency: 'EUR', exponent: 2, value: 100 },
      card: { number: await vault('pcn', '4111111111111111'), code: await vault('pcsc', '987'), expiry: { month: 1, year: 2031 } },
      test: { tds: { challenge: false, fingerprint: 'unavailable' } },
      hints: [],
    }
    const csrf = await fetch(`${base}/server/api/security/csrf`)
    const xsrf = csrf.headers.get('dspace-xsrf-token') ?? ''
    const cookie = (csrf.headers.getSetCookie()[0] ?? '').split(';')[0] ?? ''
    await proxy.down()
    const requests: Array<{ owner: keyof typeof errorShapes; path: string; init: RequestInit }> = [
      {
        owner: 'authn',
        path: '/server/api/authn/login',
        init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-xsrf-token': xsrf, cookie }, body: 'user=someone%40example.org&password=secret' },
      },
      { owner: 'avatar', path: '/v1/chat', init: { method: 'POST', headers: json, body: JSON.stringify({ sessionId: 'down', userText: 'Hello?' }) } },
      { owner: 'avatar', path: '/v1/session/down/history', init: {} },
      { owner: 'payments', path: `/transactions/${transactionId}/captures`, init: { method: 'POST', headers: { ...json, authorization: basic(appKey) }, body: '{"amount":100}' } },
      { owner: 'payments', path: `/transactions/${transactionId}`, init: { headers: { authorization: basic(appKey) } } },
      {
        owner: 'paymentsClient',
        path: '/payments',
        init: { method: 'POST', headers: { ...json, 'accept-version': '1' }, body: JSON.stringify(payment) },
      },
    ]
    for (const { owner, path, init } of requests) {
      const started = performance.now()
      const response = await fetch(base + path, init)
      const body = await response.text()
      assert.equal(response.status, 503, `${path}: ${body}`)
      assert.equal(response.headers.get('retry-after'), '2', path)
      assert.ok(performance.now() - started < 5000, `${path} answered within the bound`)
      errorShapes[owner](JSON.parse(body), 503)
      assert.doesNotMatch(body, /Fallback mode|Internal server error/i, path)
    }
  })

  it('answers 503 within the bound when the database stops answering (a statement never returns)', async (t) => {
    const { proxy, base } = await listeningApp(t)
    await fetch(`${base}/v1/session/warm/history`)
    proxy.blackhole()
    const started = performance.now()
    const response = await fetch(`${base}/v1/session/hung/history`)
    const elapsed = performance.now() - started
    assert.equal(response.status, 503, await response.text())
    assert.ok(elapsed < 4000, `answered after ${Math.round(elapsed)} ms`)
    await proxy.up()
    const after = await fetch(`${base}/v1/session/hung/history`)
    assert.equal(after.status, 404, 'the hung connection was dropped, not given to the next request')
  })

  /**
   * A keyed capture whose connection breaks at its COMMIT (`fault`, applied once its stored
   * answer is written, the last statement before the COMMIT), answered 504; then the same
   * request sent again with the same key, as a client does.
   */
  async function captureInDoubt(t: Parameters<typeof buildTestApp>[0], fault: 'blackhole' | 'deafen') {
    const { proxy, base, database, direct } = await listeningApp(t)
    const { appKey, transactionId } = await authorizeOverHttp(base, 1000)
    let armed = true
    database.observeQueries(({ sql: text }) => {
      if (!armed || !/^insert into "payments_idempotency"/.test(text)) return
      armed = false
      proxy[fault]()
      setTimeout(() => void proxy.up(), 500)
    })
    const started = performance.now()
    const capture = { method: 'POST', headers: { ...json, authorization: basic(appKey), 'idempotency-key': 'in-doubt' }, body: '{"amount":100}' }
    const response = await fetch(`${base}/transactions/${transactionId}/captures`, capture)
    const body = (await response.json()) as { code: string; message: string }
    assert.equal(response.status, 504, JSON.stringify(body))
    assert.equal(body.code, 'outcome_unknown')
    assert.equal(response.headers.get('retry-after'), null, 'nobody is invited to resend it blindly')
    assert.ok(performance.now() - started < 5000)
    await proxy.up()
    const captured = async () =>
      (await direct.db.selectFrom('payments_transactions').select('captured_amount').where('id', '=', transactionId).executeTakeFirstOrThrow()).captured_amount
    const resend = async () => {
      const resent = await fetch(`${base}/transactions/${transactionId}/captures`, capture)
      return { status: resent.status, replayed: resent.headers.get('idempotent-replayed'), body: await resent.text() }
    }
    return { captured, resend }
  }

  it('answers 504 outcome_unknown when the COMMIT is lost on its way; the same key then runs the capture, once', async (t) => {
    const { captured, resend } = await captureInDoubt(t, 'blackhole')
    assert.equal(await captured(), 0, 'the COMMIT never reached the database: nothing was applied')
    const first = await resend()
    assert.equal(first.status, 201, first.body)
    assert.equal(first.replayed, null, 'run as a new request')
    assert.equal((JSON.parse(first.body) as { transaction: { capturedAmount: number } }).transaction.capturedAmount, 100)
    const again = await resend()
    assert.equal(again.replayed, 'true')
    assert.equal(again.body, first.body, 'the answer stored with the capture, byte for byte')
    assert.equal(await captured(), 100)
  })

  it('answers 504 outcome_unknown when the COMMIT is done but its answer lost; the same key then replays it, never captures twice', async (t) => {
    const { captured, resend } = await captureInDoubt(t, 'deafen')
    assert.equal(await captured(), 100, 'the COMMIT reached the database: the capture and its answer are stored')
    const first = await resend()
    assert.equal(first.status, 201, first.body)
    assert.equal(first.replayed, 'true', 'answered from the stored answer, committed with the capture')
    assert.equal((JSON.parse(first.body) as { transaction: { capturedAmount: number } }).transaction.capturedAmount, 100)
    assert.equal((await resend()).body, first.body)
    assert.equal(await captured(), 100, 'captured once')
  })

  it('a keyed capture answered 503 leaves nothing behind: the same key runs at once when the database is back', async (t) => {
    const { proxy, base, direct } = await listeningApp(t)
    const { appKey, transactionId } = await authorizeOverHttp(base, 1000)
    const capture = { method: 'POST', headers: { ...json, authorization: basic(appKey), 'idempotency-key': 'refused' }, body: '{"amount":100}' }
    await proxy.down()
    const refused = await fetch(`${base}/transactions/${transactionId}/captures`, capture)
    assert.equal(refused.status, 503, await refused.text())
    await proxy.up()
    const resent = await fetch(`${base}/transactions/${transactionId}/captures`, capture)
    assert.equal(resent.status, 201, await resent.text())
    assert.equal(resent.headers.get('idempotent-replayed'), null)
    const row = await direct.db.selectFrom('payments_transactions').select('captured_amount').where('id', '=', transactionId).executeTakeFirstOrThrow()
    assert.equal(row.captured_amount, 100)
  })

  it('/readyz stays ready and says "slow" when the database answers slowly, and 503 "unreachable" when it is down', async (t) => {
    const { proxy, base } = await listeningApp(t)
    const ready = async () => {
      const response = await fetch(`${base}/readyz`)
      return { status: response.status, body: (await response.json()) as { checks?: Record<string, string>; error?: { details: unknown } } }
    }
    assert.equal((await ready()).body.checks?.database, 'ok')
    proxy.delay(300)
    const slow = await ready()
    assert.equal(slow.status, 200)
    assert.equal(slow.body.checks?.database, 'slow')
    await proxy.down()
    const down = await ready()
    assert.equal(down.status, 503)
    assert.deepEqual(down.body.error?.details, [{ check: 'database', state: 'unreachable' }])
    await proxy.up()
    assert.equal((await ready()).status, 200)
  })
})

describe("a request's database budget counts database time only", { skip: testDialect === 'postgres' ? false : 'the budget bounds PostgreSQL connections' }, () => {
  it('stores a chat turn whose model took longer than the whole budget', async (t) => {
    const budgetMs = REQUEST_DATABASE_BUDGET_MS
    // A model slower than the budget: reading the history before it and storing the turn after
    // it are two short uses of the database.
    const slow: LlmPort = {
      name: 'slow',
      complete: async () => {
        await sleep(budgetMs + 500)
        return '[emotion:happy][action:wave] Sorry for the wait!'
      },
      async *stream() {
        yield 'unused'
      },
    }
    const { app } = await buildTestApp(t, { services: ['avatar'], env: { AVATAR_RATE_LIMIT: '0' }, deps: { avatar: { llm: slow } } })
    const reply = await app.inject({ method: 'POST', url: '/v1/chat', payload: { sessionId: 'slow-model', userText: 'Hello?' } })
    assert.equal(reply.statusCode, 200, reply.body)
    const history = await app.inject('/v1/session/slow-model/history')
    assert.equal(history.statusCode, 200, history.body)
    assert.match(history.body, /Sorry for the wait/)
  })
})
