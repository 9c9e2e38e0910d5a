import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { createDb } from '../../src/core/db/create-db.ts'
import { buildTestApp, createTestDatabase, testDatabaseUrl, testDialect } from '../helpers/build-app.ts'
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts'
import { authorizeOverHttp, captureOverHttp, chatOverHttp, transactionOverHttp, userMessagesAt } from '../helpers/http-clients.ts'
import { standbyPairUnavailable, type StandbyPair, startStandbyPair } from '../helpers/postgres-standby.ts'

// Issue 26 item 3: lag-tolerant reads (payments' transaction lists and volume, the avatar's
// session list and history) go to the standby of DATABASE_READ_URL only once it has replayed
// every write acknowledged before the read began; otherwise, and whenever the standby is down or
// hangs, to the primary. Reads that decide a write never go there.

const MAX_WAIT_MS = 50
const METRICS_TOKEN = 'standby-reads-metrics-token'
const READ_POOL = 'triad_standby_reads'

type Counts = Record<string, number>

/** `triad_db_routed_reads_total` by `target/reason`. */
async function routedReads(base: string): Promise<Counts> {
  const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  assert.equal(response.status, 200)
  const counts: Counts = {}
  for (const [, target, reason, value] of (await response.text()).matchAll(/^triad_db_routed_reads_total\{target="(\w+)",reason="(\w+)"\} (\d+)$/gm)) {
    counts[`${target}/${reason}`] = Number(value)
  }
  return counts
}

/** What changed between two readings of the counter (zeros left out). */
function since(earlier: Counts, later: Counts): Counts {
  const changed: Counts = {}
  for (const [key, value] of Object.entries(later)) if (value !== (earlier[key] ?? 0)) changed[key] = value - (earlier[key] ?? 0)
  return changed
}

const basic = (key: string) => `Basic ${Buffer.from(`:${key}`).toString('base64')}`

// The pair is started by the test itself (any PostgreSQL server binaries do); it runs with the
// PostgreSQL suite, like every test that needs more than SQLite. CI (.ci/run) has the binaries:
// there their absence fails the test instead of skipping it.
const skip =
  (testDialect !== 'postgres' && 'runs with the PostgreSQL suite (npm run test:pg): it starts a primary and a standby of its own') ||
  (!process.env.CI && standbyPairUnavailable)

describe('reads on a standby (DATABASE_READ_URL), with a real primary and streaming standby', { skip, timeout: 240_000 }, () => {
  let pair: StandbyPair
  let proxy: FaultProxy
  let base: string
  // What `before` opens is closed when the suite ends, last opened first.
  const cleanups: Array<() => Promise<void> | void> = []
  const suite = { after: (cleanup: () => Promise<void> | void) => cleanups.unshift(cleanup) }
  after(async () => {
    for (const cleanup of cleanups) await cleanup()
  })

  before(async () => {
    assert.equal(standbyPairUnavailable, undefined, standbyPairUnavailable)
    const starting = performance.now()
    pair = await startStandbyPair(suite)
    // The standby is reached through a fault proxy, to make it hang; `application_name` marks the
    // read pool's connections in the standby's pg_stat_activity.
    proxy = await startFaultProxy({ port: Number(new URL(pair.standbyUrl).port) })
    suite.after(() => proxy.close())
    const readUrl = new URL(pair.standbyUrl)
    readUrl.host = proxy.address
    readUrl.searchParams.set('application_name', READ_POOL)
    const database = await createDb(pair.primaryUrl, { poolSize: 5, standby: { url: readUrl.toString(), maxWaitMs: MAX_WAIT_MS } })
    suite.after(() => database.destroy())
    const { app } = await buildTestApp(suite, { services: ['payments', 'avatar'], database, env: { METRICS_TOKEN, AVATAR_RATE_LIMIT: '0', PAYMENTS_RATE_LIMIT: '0' } })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
    process.stdout.write(`# primary and standby started and migrated in ${Math.round(performance.now() - starting)} ms\n`)
  })

  const list = async (fixture: { appKey: string; merchantId: string }) => {
    const started = performance.now()
    const response = await fetch(`${base}/merchants/${fixture.merchantId}/transactions?limit=50`, { headers: { authorization: basic(fixture.appKey) } })
    const text = await response.text()
    assert.equal(response.status, 200, text)
    return { ms: performance.now() - started, transactions: JSON.parse(text) as Array<{ id: string; capturedAmount: number }> }
  }

  /** Lists until one list read ran on the standby (a loaded machine may time a first one out); its figures. */
  const listOnStandby = async (fixture: { appKey: string; merchantId: string }) => {
    for (let tries = 0; tries < 40; tries++) {
      const earlier = await routedReads(base)
      const read = await list(fixture)
      const changed = since(earlier, await routedReads(base))
      if (Object.keys(changed).every((key) => key.startsWith('standby/'))) return { ...read, changed }
      await sleep(250)
    }
    assert.fail('no list read went to the standby within 10 s')
  }

  it('runs a list read on the standby once it has replayed the writes before it', async (t) => {
    const fixture = await authorizeOverHttp(base, 1000)
    await pair.caughtUp()
    const read = await listOnStandby(fixture)
    assert.deepEqual(Object.values(read.changed), [1], 'one routed read for the page and its trails')
    assert.deepEqual(
      read.transactions.map((transaction) => transaction.id),
      [fixture.transactionId],
    )
    // The standby's own view: a connection of the read pool last ran the page's trail query.
    const activity = await pair.onStandby<{ query: string }>(`select query from pg_stat_activity where application_name = '${READ_POOL}'`)
    assert.ok(
      activity.some((row) => row.query.includes('"payments_trail"')),
      JSON.stringify(activity),
    )
    t.diagnostic(`list read on the standby: ${read.ms.toFixed(1)} ms (${Object.keys(read.changed).join(', ')})`)
  })

  it('answers from the primary, within the wait bound, what was written while the standby lagged; captures are unaffected', async (t) => {
    // A baseline first, with the standby caught up.
    const settled = await authorizeOverHttp(base, 100)
    await pair.caughtUp()
    const baseline = (await listOnStandby(settled)).ms

    await pair.onStandby('select pg_wal_replay_pause()')
    try {
      const fixture = await authorizeOverHttp(base, 2500)
      const chat = await chatOverHttp(base, 'written-while-lagging', 'Remember me?')
      assert.equal(chat.status, 200, chat.body)
      const earlier = await routedReads(base)
      const lagged = await list(fixture)
      assert.deepEqual(
        lagged.transactions.map((transaction) => transaction.id),
        [fixture.transactionId],
        'the list shows the authorization made just before it',
      )
      assert.deepEqual(await userMessagesAt(base, 'written-while-lagging'), ['Remember me?'])
      const sessions = await fetch(`${base}/v1/sessions`)
      assert.ok(((await sessions.json()) as { sessions: Array<{ id: string }> }).sessions.some((session) => session.id === 'written-while-lagging'))
      const volume = await fetch(`${base}/merchants/${fixture.merchantId}/volume`, { headers: { authorization: basic(fixture.appKey) } })
      const totals = ((await volume.json()) as { volume: { currencies: Array<{ count: number; authorized: number }> } }).volume.currencies
      assert.deepEqual(
        totals.map((currency) => [currency.count, currency.authorized]),
        [[1, 2500]],
      )
      assert.deepEqual(since(earlier, await routedReads(base)), { 'primary/lagging': 4 }, 'list, history, sessions, volume: each waited, then went to the primary')
      assert.ok(lagged.ms >= MAX_WAIT_MS * 0.8, `the read waited for the standby first (${lagged.ms.toFixed(1)} ms)`)
      assert.ok(lagged.ms < MAX_WAIT_MS + Math.max(1000, 5 * baseline), `the wait is bounded (${lagged.ms.toFixed(1)} ms; on the standby ${baseline.toFixed(1)} ms)`)
      t.diagnostic(`lagging: list ${lagged.ms.toFixed(1)} ms from the primary after the ${MAX_WAIT_MS} ms bound, against ${baseline.toFixed(1)} ms on the standby`)

      // Reads that decide a write are never routed: the captures see each other at once.
      const beforeCaptures = await routedReads(base)
      assert.equal(await captureOverHttp(base, fixture.appKey, fixture.transactionId, 1000), 201)
      assert.equal(await captureOverHttp(base, fixture.appKey, fixture.transactionId, 1600), 400, 'more than the 1500 left is refused')
      assert.equal(await captureOverHttp(base, fixture.appKey, fixture.transactionId, 1500), 201)
      assert.equal((await transactionOverHttp(base, fixture.appKey, fixture.transactionId)).capturedAmount, 2500)
      assert.deepEqual(since(beforeCaptures, await routedReads(base)), {}, 'no routed read in a capture or GET /transactions/{id}')

      await pair.onStandby('select pg_wal_replay_resume()')
      const resumed = await listOnStandby(fixture)
      assert.deepEqual(
        resumed.transactions.map((transaction) => [transaction.id, transaction.capturedAmount]),
        [[fixture.transactionId, 2500]],
      )
    } finally {
      await pair.onStandby('select pg_wal_replay_resume()')
    }
  })

  it('answers from the primary while the standby is down, and goes back to it once it is up', async (t) => {
    const fixture = await authorizeOverHttp(base, 700)
    await pair.stopStandby()
    try {
      const earlier = await routedReads(base)
      const times: number[] = []
      for (let index = 0; index < 3; index++) {
        const read = await list(fixture)
        assert.deepEqual(
          read.transactions.map((transaction) => transaction.id),
          [fixture.transactionId],
        )
        times.push(read.ms)
      }
      assert.deepEqual(since(earlier, await routedReads(base)), { 'primary/standby_unavailable': 3 })
      t.diagnostic(`standby down: ${times.map((ms) => ms.toFixed(1)).join(', ')} ms`)
    } finally {
      await pair.startStandby()
    }
    await pair.caughtUp()
    await listOnStandby(fixture)
  })

  it('answers from the primary within the bound while the standby hangs', async (t) => {
    const fixture = await authorizeOverHttp(base, 900)
    await pair.caughtUp()
    await listOnStandby(fixture)
    proxy.blackhole()
    try {
      const earlier = await routedReads(base)
      const first = await list(fixture)
      const next = await list(fixture)
      assert.deepEqual(
        first.transactions.map((transaction) => transaction.id),
        [fixture.transactionId],
      )
      assert.deepEqual(since(earlier, await routedReads(base)), { 'primary/standby_unavailable': 2 })
      assert.ok(first.ms < MAX_WAIT_MS + 500 + 1000, `the first read gave up on the standby in time (${first.ms.toFixed(1)} ms)`)
      t.diagnostic(`standby hanging: first read ${first.ms.toFixed(1)} ms (gives up after ${MAX_WAIT_MS + 500} ms), the next ${next.ms.toFixed(1)} ms (straight to the primary)`)
    } finally {
      await proxy.up()
    }
    await listOnStandby(fixture)
  })
})

describe(`routed reads without a usable standby (${testDialect})`, () => {
  it('run on the primary, uncounted, when no standby is configured', async (t) => {
    const database = await createTestDatabase(t)
    assert.equal(database.observeRoutedReads, undefined)
    assert.equal(await database.routedRead(async (db) => db === database.db), true)
  })

  it(
    'never use a read URL that names a server out of recovery (no waiting), and refuse a transaction',
    { skip: testDialect !== 'postgres' && 'a standby needs PostgreSQL (npm run test:pg)' },
    async (t) => {
      const schema = `test_${randomBytes(6).toString('hex')}`
      const database = await createDb(testDatabaseUrl, { schema, poolSize: 2, standby: { url: testDatabaseUrl, maxWaitMs: 500 } })
      t.after(async () => {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db)
        await database.destroy()
      })
      const outcomes: string[] = []
      database.observeRoutedReads?.((outcome) => outcomes.push(`${outcome.target}/${outcome.reason}`))
      const started = performance.now()
      assert.equal(await database.routedRead(async (db) => (await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]?.one), 1)
      assert.ok(performance.now() - started < 400, 'no wait for a server that will never replay')
      await assert.rejects(
        database.routedRead((db) => db.transaction().execute(async () => {})),
        /a routed read runs outside transactions/,
      )
      assert.deepEqual(outcomes, ['primary/standby_unavailable', 'primary/standby_unavailable'])
    },
  )
})
