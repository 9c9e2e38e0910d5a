// Payments benchmarks, same run:
//  1. Capture throughput (POST /transactions/{id}/captures over HTTP) on SQLite against a raw
//     node:sqlite loop doing the same row writes in the same transactions, same pragmas
//     (WAL, synchronous NORMAL): target ≥ 0.5.
//  2. The same captures on PostgreSQL (figure only), when BENCH_PG_URL (or the default local
//     server) answers.
//  3. GET /transactions/{id} against the bare Fastify baseline: target ≥ 0.5.
// Captures are also measured with an Idempotency-Key each (issue 35: the key's answer commits in
// the capture's transaction), in the same rounds, as a ratio to the captures without one.
// Besides req/s, each figure comes with the server's CPU µs per request (from /proc; the raw
// loop's from process.cpuUsage), which the other load on a shared machine disturbs far less.
// Usage: node bench/payments.ts [--rounds 3 --duration 5 --pg postgres://127.0.0.1:5432/test]
import autocannon from 'autocannon'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { parseArgs } from 'node:util'
import { type Kysely, sql } from 'kysely'
import { systemClock } from '../src/core/clock.ts'
import { createDb, type DialectName } from '../src/core/db/create-db.ts'
import { migrateToLatest } from '../src/core/db/migrator.ts'
import { createIdGenerator } from '../src/core/ids.ts'
import { migrations } from '../src/services/payments/migrations/index.ts'
import { cardExpiry, recordTransaction } from '../src/services/payments/modules/transactions/index.ts'
import { createEventRecorder } from '../src/services/payments/modules/webhooks/index.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { compare, measure, printComparison, reportRow, seedAuthorizations, smoke, startBaseline, startTriad, toMeasurement, basicAuth } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    transactions: { type: 'string', default: '200' },
    pg: { type: 'string', default: process.env.BENCH_PG_URL ?? 'postgres://127.0.0.1:5432/test' },
    smoke: { type: 'boolean', default: false },
  },
})
const rounds = smoke ? 1 : Number(values.rounds)
const durationSeconds = smoke ? 1 : Number(values.duration)
const connections = Number(values.connections)
const transactionCount = smoke ? 50 : Number(values.transactions)
const ids = createIdGenerator(systemClock)
const events = createEventRecorder({ ids, clock: systemClock, dialect: 'sqlite' })

/** The pid of our child process listening on `port` (its socket's inode in /proc/net/tcp, then /proc/<pid>/fd). */
function pidListeningOn(port: number): number {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0')
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields[1]?.endsWith(`:${portHex}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9])
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      for (const fd of readdirSync(`/proc/${entry}/fd`)) if (inodes.has(readlinkSync(`/proc/${entry}/fd/${fd}`).slice('socket:['.length, -1))) return Number(entry)
    } catch {}
  }
  throw new Error(`no process of ours listens on port ${port}`)
}

/**
 * CPU time (user + system, all threads) a server process has used so far, in µs. CPU per
 * request is far less disturbed by the other load on a shared machine than requests per second.
 */
function cpuClock(url: string): () => number {
  const pid = pidListeningOn(Number(new URL(url).port))
  return () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100
  }
}

/** A measurement plus the server's CPU µs per request during it. */
async function withCpu<T extends { requestsPerSecond: number }>(cpu: () => number, run: () => Promise<T>): Promise<T & { cpuPerRequest: number }> {
  const before = cpu()
  const result = await run()
  return { ...result, cpuPerRequest: (cpu() - before) / Math.max(result.requestsPerSecond * durationSeconds, 1) }
}

const median = (items: number[]) => [...items].sort((a, b) => a - b)[Math.floor(items.length / 2)]

/** Creates an app and a test EUR merchant over HTTP, then seeds authorizations through the service layer. */
async function seed(url: string, db: Kysely<PaymentsTables>, dialect: DialectName, count: number): Promise<{ key: string; transactionIds: string[] }> {
  const app = (await (await fetch(`${url}/apps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as {
    app: { key: string }
  }
  const key = app.app.key
  const created = await fetch(`${url}/merchants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicAuth(key) },
    body: JSON.stringify({
      currency: 'EUR',
      email: 'bench@example.com',
      website: 'https://example.com',
      descriptor: 'BENCH',
      company: { country: 'DK' },
      test: true,
    }),
  })
  const merchant = ((await created.json()) as { merchant: { id: string; test: boolean; descriptor: string } }).merchant
  const transactionIds = await seedAuthorizations(db, dialect, merchant.id, count)
  return { key, transactionIds }
}

/** More authorizations on the merchant of an existing transaction. */
async function seedMore(db: Kysely<PaymentsTables>, existingId: string, count: number, amount = 10_000): Promise<{ transactionIds: string[] }> {
  const { merchant_id } = await db.selectFrom('payments_transactions').select('merchant_id').where('id', '=', existingId).executeTakeFirstOrThrow()
  return { transactionIds: await seedAuthorizations(db, 'sqlite', merchant_id, count, { amount }) }
}

/** Fresh authorizations for one more round of captures, on the merchant of `existingId`. */
async function seedRound(existingId: string): Promise<{ transactionIds: string[] }> {
  const seedDb = await createDb(sqliteUrl)
  try {
    return await seedMore(seedDb.db as Kysely<PaymentsTables>, existingId, transactionCount, 1_000_000_000)
  } finally {
    await seedDb.destroy()
  }
}

let sentKeys = 0

/** Captures of 1 cent, spread round-robin over the seeded transactions; `keyed`: each with an Idempotency-Key of its own. */
async function captureLoad(url: string, key: string, transactionIds: string[], seconds = durationSeconds, keyed = false) {
  let next = 0
  const headers = { authorization: basicAuth(key), 'content-type': 'application/json' }
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers,
        body: '{"amount":1}',
        setupRequest: (request) => {
          const id = transactionIds[next++ % transactionIds.length]
          const path = `/transactions/${id}/captures`
          return keyed ? { ...request, path, headers: { ...headers, 'idempotency-key': `bench-${sentKeys++}` } } : { ...request, path }
        },
      },
    ],
  })
  return toMeasurement(result)
}

/**
 * The floor under any SQLite implementation: the same statements a capture runs (lock, read
 * the transaction with its merchant's pricing and the caller's membership, insert the line, move the balance, insert the trail entry,
 * update the counters, read the trail back), one BEGIN IMMEDIATE … COMMIT each, prepared once,
 * in-process, no HTTP — with the pragmas Triad uses.
 */
async function rawSqliteLoop(seconds: number): Promise<{ perSecond: number; cpuPerCapture: number }> {
  const path = join(mkdtempSync(join(tmpdir(), 'triad-bench-raw-')), 'raw.sqlite')
  const database = await createDb(`sqlite:${path}`)
  await migrateToLatest(database.db, 'payments', migrations)
  const db = database.db as Kysely<PaymentsTables>
  const now = new Date().toISOString()
  await db
    .insertInto('payments_merchants')
    .values({
      id: 'm',
      key: 'k',
      name: null,
      currency: 'EUR',
      test: 1,
      email: 'e',
      website: 'w',
      descriptor: 'd',
      company_country: 'DK',
      company_number: null,
      bank_iban: null,
      fee_rate_ppm: 13_500,
      fee_flat: 25,
      dispute_fee: 1500,
      tds_mode: 'attempt',
      created: now,
    })
    .execute()
  const transactionIds: string[] = []
  for (let index = 0; index < transactionCount; index++) {
    const row = await recordTransaction(
      { db, database: { dialect: 'sqlite' }, ids, clock: systemClock, events },
      {
        merchant: { id: 'm', test: 1, descriptor: 'd' },
        amount: 1_000_000_000,
        currency: 'EUR',
        card: { ref: null, bin: '410000', last4: '0000', expiry: cardExpiry(2030, 8), scheme: 'visa', codePresent: true },
        recurring: false,
      },
    )
    transactionIds.push(row.id)
  }
  await database.destroy()

  const raw = new DatabaseSync(path)
  raw.exec('PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON')
  const selectTransaction = raw.prepare(
    'select t.*, exists (select 1 from payments_merchant_apps a where a.merchant_id = t.merchant_id and a.app_id = ?) as member, m.currency as m_currency, m.fee_rate_ppm as m_fee_rate_ppm, m.fee_flat as m_fee_flat, m.dispute_fee as m_dispute_fee from payments_transactions t inner join payments_merchants m on m.id = t.merchant_id where t.id = ?',
  )
  const insertLine = raw.prepare(
    'insert into payments_lines (id, merchant_id, test, created, kind, balance, fee, description, transaction_id, amount_currency, amount) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const moveBalance = raw.prepare(
    'insert into payments_balance_shards (merchant_id, shard, balance) values (?, ?, ?) on conflict (merchant_id, shard) do update set balance = payments_balance_shards.balance + excluded.balance',
  )
  const insertTrail = raw.prepare(
    'insert into payments_trail (id, transaction_id, kind, created, amount, balance, fee_flat, fee_rate, descriptor, line_id, dispute_id, dispute_outcome) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const updateCounters = raw.prepare(
    'update payments_transactions set captured_amount = ?, refunded_amount = ?, voided_amount = ?, disputed_amount = ?, lost_amount = ? where id = ?',
  )
  const readTrail = raw.prepare('select * from payments_trail where transaction_id = ? order by created, id')
  let done = 0
  const cpuBefore = process.cpuUsage()
  const deadline = performance.now() + seconds * 1000
  while (performance.now() < deadline) {
    const id = transactionIds[done % transactionIds.length]
    raw.exec('begin immediate')
    const row = selectTransaction.get('app', id) as { amount: number; captured_amount: number; voided_amount: number; descriptor: string }
    if (row.amount - row.captured_amount - row.voided_amount < 1) throw new Error('exhausted')
    const created = new Date().toISOString()
    const lineId = ids.timeOrdered()
    insertLine.run(lineId, 'm', 1, created, 'capture', -24, 25, null, id, 'EUR', 1)
    moveBalance.run('m', Number.parseInt(id.slice(-1), 16), -24)
    insertTrail.run(ids.timeOrdered(), id, 'capture', created, 1, -24, 25, 1, row.descriptor, lineId, null, null)
    updateCounters.run(row.captured_amount + 1, 0, 0, 0, 0, id)
    readTrail.all(id)
    raw.exec('commit')
    done++
  }
  const cpu = process.cpuUsage(cpuBefore)
  raw.close()
  return { perSecond: done / seconds, cpuPerCapture: (cpu.user + cpu.system) / Math.max(done, 1) }
}

function printCaptures(
  name: string,
  m: { requestsPerSecond: number; latencyP50Ms: number; latencyP99Ms: number; errors: number; non2xx: number; cpuPerRequest?: number },
) {
  const cpu = m.cpuPerRequest === undefined ? '' : `   server CPU ${m.cpuPerRequest.toFixed(0)} µs/capture`
  console.log(
    `  ${name.padEnd(10)} ${m.requestsPerSecond.toFixed(0).padStart(8)} captures/s   p50 ${m.latencyP50Ms.toFixed(1)} ms   p99 ${m.latencyP99Ms.toFixed(1)} ms   errors ${m.errors}   non-2xx ${m.non2xx}${cpu}`,
  )
}

/** Baseline and Triad in alternating rounds, with each server's CPU per request. */
async function cpuComparison(name: string, baselineCpu: () => number, triadCpu: () => number, path: string, headers?: Record<string, string>) {
  const base: number[] = []
  const subject: number[] = []
  const result = await compare(
    rounds,
    async () => {
      const m = await withCpu(baselineCpu, () => measure(baseline.url, { path: '/', durationSeconds }))
      base.push(m.cpuPerRequest)
      return m
    },
    async () => {
      const m = await withCpu(triadCpu, () => measure(triad.url, { path, headers, durationSeconds }))
      subject.push(m.cpuPerRequest)
      return m
    },
  )
  printComparison(name, result)
  console.log(
    `  server CPU µs/request (median of ${rounds}): baseline ${median(base).toFixed(1)}, triad ${median(subject).toFixed(1)}; ratio by CPU ${(median(base) / median(subject)).toFixed(2)}`,
  )
  reportRow({
    benchmark: 'payments',
    measure: `${name.replace(/ vs bare Fastify.*$/, '').trim()} ÷ bare Fastify hello-world (informational: the same-work yardstick is in bench/yardsticks.ts)`,
    target: '—',
    figure: `${result.ratio.toFixed(2)} (CPU ${median(subject).toFixed(0)}/${median(base).toFixed(0)} µs/req)`,
    met: null,
    command: 'node bench/payments.ts',
  })
}

// 1 + 3: SQLite.
const dataDir = mkdtempSync(join(tmpdir(), 'triad-bench-payments-'))
const sqliteUrl = `sqlite:${join(dataDir, 'triad.sqlite')}`
const baseline = await startBaseline()
const triad = await startTriad({ DATABASE_URL: sqliteUrl, PAYMENTS_RATE_LIMIT: '0' })
try {
  const seedDb = await createDb(sqliteUrl)
  const { key, transactionIds } = await seed(triad.url, seedDb.db as Kysely<PaymentsTables>, seedDb.dialect, transactionCount)
  await seedDb.destroy()

  const triadCaptures: number[] = []
  const triadCpu: number[] = []
  const keyedCaptures: number[] = []
  const rawCaptures: number[] = []
  const rawCpu: number[] = []
  const baselineCpu = cpuClock(baseline.url)
  const triadCpuClock = cpuClock(triad.url)
  console.log(`Captures on SQLite (${rounds} rounds × ${durationSeconds} s, ${connections} connections, ${transactionCount} transactions)`)
  // Warm-up, not measured: Triad's first seconds compile its hot paths (the in-process raw loop
  // warms up within its first milliseconds). On authorizations of their own.
  await captureLoad(triad.url, key, (await seedRound(transactionIds[0])).transactionIds, 2)
  for (let round = 0; round < rounds; round++) {
    const raw = await rawSqliteLoop(durationSeconds)
    rawCaptures.push(raw.perSecond)
    rawCpu.push(raw.cpuPerCapture)
    // Like the raw loop, each round captures on fresh authorizations: the response carries the
    // whole trail, so trails grown by earlier rounds would make later rounds dearer.
    const targets = round === 0 ? transactionIds : (await seedRound(transactionIds[0])).transactionIds
    const measured = await withCpu(triadCpuClock, () => captureLoad(triad.url, key, targets))
    triadCaptures.push(measured.requestsPerSecond)
    triadCpu.push(measured.cpuPerRequest)
    printCaptures(`triad #${round + 1}`, measured)
    const keyedTargets = (await seedRound(transactionIds[0])).transactionIds
    const keyed = await withCpu(triadCpuClock, () => captureLoad(triad.url, key, keyedTargets, durationSeconds, true))
    keyedCaptures.push(keyed.requestsPerSecond)
    printCaptures(`keyed #${round + 1}`, keyed)
  }
  const mean = (items: number[]) => items.reduce((a, b) => a + b, 0) / items.length
  const ratio = mean(triadCaptures) / mean(rawCaptures)
  console.log(
    `  raw loop   ${mean(rawCaptures).toFixed(0).padStart(8)} captures/s (node:sqlite, in-process, same statements and pragmas), CPU ${median(rawCpu).toFixed(0)} µs/capture (median)`,
  )
  console.log(`  triad      ${mean(triadCaptures).toFixed(0).padStart(8)} captures/s, server CPU ${median(triadCpu).toFixed(0)} µs/capture (median)`)
  console.log(`  ratio      ${ratio.toFixed(2)}; by CPU ${(median(rawCpu) / median(triadCpu)).toFixed(2)}`)
  reportRow({
    benchmark: 'payments',
    measure: 'Captures over HTTP on SQLite ÷ an in-process node:sqlite loop of the same statements, no HTTP (informational: the floor under any SQLite implementation)',
    target: '—',
    figure: `${ratio.toFixed(2)} (${mean(triadCaptures).toFixed(0)} vs ${mean(rawCaptures).toFixed(0)} captures/s; CPU ${median(triadCpu).toFixed(0)}/${median(rawCpu).toFixed(0)} µs/capture)`,
    met: null,
    command: 'node bench/payments.ts',
  })

  reportKeyed('SQLite', keyedCaptures, triadCaptures)

  // A typical transaction for the read: one capture on its trail (the captured ones above have long trails).
  const seedAgain = await createDb(sqliteUrl)
  const { transactionIds: fresh } = await seedMore(seedAgain.db as Kysely<PaymentsTables>, transactionIds[0], 2)
  await seedAgain.destroy()
  const sample = fresh[0]
  await fetch(`${triad.url}/transactions/${sample}/captures`, {
    method: 'POST',
    headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
    body: '{"amount":100}',
  })
  await cpuComparison(
    `GET /transactions/{id} (one capture on its trail) on SQLite vs bare Fastify (${rounds} rounds × ${durationSeconds} s, 20 connections)`,
    baselineCpu,
    triadCpuClock,
    `/transactions/${sample}`,
    { authorization: basicAuth(key) },
  )
  await cpuComparison('GET /transactions/{id} (a fresh authorization, empty trail) on SQLite vs bare Fastify', baselineCpu, triadCpuClock, `/transactions/${fresh[1]}`, {
    authorization: basicAuth(key),
  })
  // For context: the same server's cheapest route (no auth, no database), same run.
  await cpuComparison('  (reference) GET /healthz of the same server vs bare Fastify', baselineCpu, triadCpuClock, '/healthz')
} finally {
  await Promise.all([baseline.stop(), triad.stop()])
}

// 2: PostgreSQL, in a schema of its own, when a server answers.
const schema = `bench_${randomBytes(4).toString('hex')}`
let admin: Awaited<ReturnType<typeof createDb>> | undefined
try {
  admin = await createDb(values.pg, { schema, poolSize: 2 })
} catch (error) {
  console.log(`PostgreSQL skipped (${values.pg}: ${error instanceof Error ? error.message : String(error)})`)
  reportRow({ benchmark: 'payments', measure: 'Captures over HTTP on PostgreSQL: skipped', target: '—', figure: `no server at ${values.pg}`, met: null, command: 'node bench/payments.ts' })
}
if (admin) {
  const pgUrl = `${values.pg}${values.pg.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`
  const pgTriad = await startTriad({ DATABASE_URL: pgUrl, PAYMENTS_RATE_LIMIT: '0' })
  try {
    const { key, transactionIds } = await seed(pgTriad.url, admin.db as Kysely<PaymentsTables>, admin.dialect, transactionCount)
    console.log(`Captures on PostgreSQL (${rounds} rounds × ${durationSeconds} s, ${connections} connections, ${transactionCount} transactions)`)
    const perSecond: number[] = []
    const keyedPerSecond: number[] = []
    for (let round = 0; round < rounds; round++) {
      const measured = await captureLoad(pgTriad.url, key, transactionIds)
      perSecond.push(measured.requestsPerSecond)
      printCaptures(`triad #${round + 1}`, measured)
      const keyed = await captureLoad(pgTriad.url, key, transactionIds, durationSeconds, true)
      keyedPerSecond.push(keyed.requestsPerSecond)
      printCaptures(`keyed #${round + 1}`, keyed)
    }
    reportKeyed('PostgreSQL', keyedPerSecond, perSecond)
    reportRow({
      benchmark: 'payments',
      measure: `Captures over HTTP on PostgreSQL (${connections} connections)`,
      target: '—',
      figure: `${median(perSecond).toFixed(0)} captures/s (median of rounds)`,
      met: null,
      command: 'node bench/payments.ts',
    })
  } finally {
    await pgTriad.stop()
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db)
    await admin.destroy()
  }
}

/** Captures with an Idempotency-Key each ÷ captures without, measured in the same rounds. */
function reportKeyed(engine: string, keyed: number[], plain: number[]): void {
  const sum = (items: number[]) => items.reduce((a, b) => a + b, 0)
  const ratio = sum(keyed) / sum(plain)
  console.log(`  keyed ÷ plain captures on ${engine}: ${ratio.toFixed(2)} (${(sum(keyed) / keyed.length).toFixed(0)} vs ${(sum(plain) / plain.length).toFixed(0)} captures/s)`)
  reportRow({
    benchmark: 'payments',
    measure: `Captures with an Idempotency-Key each ÷ captures without, on ${engine} (same rounds; the key's answer commits in the capture's transaction)`,
    target: '—',
    figure: `${ratio.toFixed(2)} (${(sum(keyed) / keyed.length).toFixed(0)} vs ${(sum(plain) / plain.length).toFixed(0)} captures/s)`,
    met: null,
    command: 'node bench/payments.ts',
  })
}
