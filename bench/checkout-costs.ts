// The checkout's costs one layer at a time (issue 27): in one process, on a payments database
// Triad made (a file, Triad's pragmas), each measured against the same work on node:sqlite
// directly, in alternating rounds: a SELECT through Triad's repository (core/db/prepared.ts),
// a write transaction through withTransaction (group commit, Kysely's transaction), the final
// payment's database work as Triad does it (its own functions: the vault's spend-and-store
// transaction, the sandbox card read, recordTransaction with the outbox) against the same
// statements on node:sqlite and against the least-work yardstick's single transaction, and
// one request log line (Triad's logger options and batched stream, to a file). These are the
// per-statement and per-transaction figures behind bench/README.md's checkout arithmetic; the
// HTTP side is `node bench/yardsticks.ts --routes checkout --steps`.
// Usage: node bench/checkout-costs.ts [--rounds 5 --reps 2000 --smoke]
import { createHash } from 'node:crypto'
import { mkdtempSync, openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { parseArgs } from 'node:util'
import type { Kysely } from 'kysely'
import pino from 'pino'
import { systemClock } from '../src/core/clock.ts'
import { createDb } from '../src/core/db/create-db.ts'
import { withTransaction } from '../src/core/db/transaction.ts'
import { createBatchedStream } from '../src/core/http/log-stream.ts'
import { loggerOptions } from '../src/core/http/logger.ts'
import { createIdGenerator } from '../src/core/ids.ts'
import { findMerchantByKey } from '../src/services/payments/modules/merchants/merchants.repository.ts'
import { cardExpiry, recordTransaction } from '../src/services/payments/modules/transactions/index.ts'
import * as vaultRepo from '../src/services/payments/modules/vault/vault.repository.ts'
import { createEventRecorder } from '../src/services/payments/modules/webhooks/index.ts'
import { findCardState } from '../src/services/payments/processors/sandbox.repository.ts'
import type { PaymentsTables } from '../src/services/payments/tables.ts'
import { basicAuth, reportRow, smoke, startTriad } from './lib.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, reps: { type: 'string', default: '2000' }, smoke: { type: 'boolean', default: false } } })
const rounds = smoke ? 1 : Number(values.rounds)
const reps = smoke ? 100 : Number(values.reps)
const command = 'node bench/checkout-costs.ts'
const work = mkdtempSync(join(tmpdir(), 'triad-checkout-costs-'))

// A payments database as Triad makes it, with one test merchant.
const path = join(work, 'payments.sqlite')
const triad = await startTriad({ DATABASE_URL: `sqlite:${path}`, PAYMENTS_RATE_LIMIT: '0' })
let merchant: { id: string; key: string }
try {
  const post = async (route: string, body: unknown, headers: Record<string, string> = {}) =>
    (await (await fetch(`${triad.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })).json()) as Record<string, { id: string; key: string }>
  const app = (await post('/apps', {})).app as { key: string }
  merchant = (await post('/merchants', { currency: 'EUR', email: 'costs@example.com', website: 'https://example.com', descriptor: 'BENCH', company: { country: 'DK' }, test: true }, { authorization: basicAuth(app.key) }))
    .merchant as { id: string; key: string }
} finally {
  await triad.stop()
}

const raw = new DatabaseSync(path, { enableForeignKeyConstraints: true })
for (const pragma of ['busy_timeout = 5000', 'journal_mode = WAL', 'synchronous = NORMAL', 'foreign_keys = ON']) raw.exec(`PRAGMA ${pragma}`)
const sql = {
  merchant: raw.prepare('select "id", "name", "test", "descriptor", "currency", "tds_mode" from "payments_merchants" where "key" = ?'),
  spend: raw.prepare('insert into "payments_vault_spent_tokens" ("token_hash", "expires") values (?, ?) on conflict ("token_hash") do nothing'),
  spendBoth: raw.prepare('insert into "payments_vault_spent_tokens" ("token_hash", "expires") values (?, ?), (?, ?) on conflict ("token_hash") do nothing'),
  card: raw.prepare('insert into "payments_vault_cards" ("id", "sealed", "created") values (?, ?, ?)'),
  sandbox: raw.prepare('select * from "payments_sandbox_cards" where "card_ref" = ?'),
  transaction: raw.prepare(
    'insert into "payments_transactions" ("id", "merchant_id", "test", "created", "currency", "amount", "descriptor", "captured_amount", "refunded_amount", "voided_amount", "disputed_amount", "lost_amount", "card_bin", "card_last4", "card_expiry", "card_scheme", "card_code_present", "card_ref", "custom", "text", "tds", "recurring", "successful", "error", "source_transaction_id") values (?, ?, 1, ?, ?, ?, ?, 0, 0, 0, 0, 0, ?, ?, ?, ?, 1, ?, null, null, ?, 0, 1, null, null)',
  ),
  sequence: raw.prepare('select max("subject_seq") as "last" from "payments_events" where "subject_id" = ?'),
  event: raw.prepare('insert into "payments_events" ("id", "merchant_id", "type", "subject_id", "subject_seq", "created", "data") values (?, ?, ?, ?, ?, ?, ?)'),
  endpoints: raw.prepare('select "id", "events" from "payments_webhook_endpoints" where "merchant_id" = ? and "status" = ? and "deleted" is null'),
}
const database = await createDb(`sqlite:${path}`)
const db = database.db as Kysely<PaymentsTables>
const payments = { db, dialect: database.dialect }
const ids = createIdGenerator(systemClock)
const events = createEventRecorder({ ids, clock: systemClock, dialect: 'sqlite' })

let counter = 0
const unique = () => createHash('sha256').update(`token ${counter++} ${process.pid}`).digest('hex')
const sealed = `v2.0123456789abcdef.${'x'.repeat(16)}.${'y'.repeat(22)}.${'z'.repeat(22)}`
const expires = new Date(Date.now() + 3_600_000).toISOString()
const expiry = cardExpiry(2030, 12)
const eventData = JSON.stringify({ transaction: 'an authorization as the merchant API shows it'.padEnd(560, '.') })

/** Triad's final payment, database side: its own functions, in its order (client-payments.service.ts `authorize`). */
async function triadAuthorization(): Promise<void> {
  const ref = `vcard_${ids.timeOrdered()}`
  const created = new Date().toISOString()
  await withTransaction(payments, async (trx) => {
    for (const hash of [unique(), unique()]) await vaultRepo.markSpent(trx, 'sqlite', hash, expires)
    await vaultRepo.insertCard(trx, 'sqlite', { id: ref, sealed, created })
  })
  await findCardState(db, 'sqlite', ref)
  await recordTransaction(
    { db, database, ids, clock: systemClock, events },
    {
      merchant: { id: merchant.id, test: 1, descriptor: 'BENCH' },
      amount: 195,
      currency: 'EUR',
      card: { ref, bin: '411111', last4: '1111', expiry, scheme: 'visa', codePresent: true },
      tds: 'full',
      recurring: false,
    },
  )
}

function inTransaction(work: () => void): void {
  raw.exec('begin immediate')
  work()
  raw.exec('commit')
}

/** The same statements on node:sqlite, two transactions (the same-statements yardstick's). */
function sameStatementsAuthorization(): void {
  const ref = `vcard_${ids.timeOrdered()}`
  const created = new Date().toISOString()
  inTransaction(() => {
    for (const hash of [unique(), unique()]) sql.spend.run(hash, expires)
    sql.card.run(ref, sealed, created)
  })
  sql.sandbox.get(ref)
  const id = ids.timeOrdered()
  inTransaction(() => {
    sql.transaction.run(id, merchant.id, created, 'EUR', 195, 'BENCH', '411111', '1111', expiry, 'visa', ref, 'full')
    const last = (sql.sequence.get(id) as { last: number | null }).last ?? 0
    sql.event.run(ids.timeOrdered(), merchant.id, 'transaction.authorized', id, last + 1, created, eventData)
    sql.endpoints.all(merchant.id, 'enabled')
  })
}

/** The least-work yardstick's: one transaction, both tokens in one INSERT, no sandbox, sequence or endpoint reads. */
function leastWorkAuthorization(): void {
  const ref = `vcard_${ids.timeOrdered()}`
  const created = new Date().toISOString()
  const id = ids.timeOrdered()
  inTransaction(() => {
    sql.spendBoth.run(unique(), expires, unique(), expires)
    sql.card.run(ref, sealed, created)
    sql.transaction.run(id, merchant.id, created, 'EUR', 195, 'BENCH', '411111', '1111', expiry, 'visa', ref, 'full')
    sql.event.run(ids.timeOrdered(), merchant.id, 'transaction.authorized', id, 1, created, eventData)
  })
}

const logFile = openSync(join(work, 'log'), 'w')
const logOptions = loggerOptions('info', false, createBatchedStream(logFile) as unknown as NodeJS.WritableStream) as pino.LoggerOptions & { stream: pino.DestinationStream }
const logger = pino(logOptions, logOptions.stream)

interface Contender {
  name: string
  run: () => unknown
}

const cpuNow = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

/** CPU µs per call of each contender: alternating rounds, the median round of each. */
async function measure(label: string, contenders: Contender[]): Promise<number[]> {
  const perRound: number[][] = contenders.map(() => [])
  for (const contender of contenders) for (let index = 0; index < Math.min(200, reps); index++) await contender.run()
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < contenders.length; turn++) {
      const index = (round + turn) % contenders.length
      const contender = contenders[index] as Contender
      const before = cpuNow()
      for (let call = 0; call < reps; call++) await contender.run()
      perRound[index]?.push((cpuNow() - before) / reps)
    }
  }
  const medians = perRound.map((items) => [...items].sort((a, b) => a - b)[Math.floor(items.length / 2)] ?? Number.NaN)
  const figure = contenders.map((contender, index) => `${contender.name} ${(medians[index] ?? Number.NaN).toFixed(1)} µs`).join('; ')
  console.log(`${label}: ${figure}`)
  reportRow({ benchmark: 'checkout-costs', measure: label, target: '—', figure, met: null, command })
  return medians
}

try {
  await measure('checkout cost: SELECT of a merchant by key, CPU per statement', [
    { name: 'node:sqlite', run: () => sql.merchant.get(merchant.key) },
    { name: "Triad's repository", run: () => findMerchantByKey(db, 'sqlite', merchant.key) },
  ])
  await measure('checkout cost: a write transaction of one INSERT, CPU per transaction (one at a time)', [
    { name: 'node:sqlite BEGIN IMMEDIATE … COMMIT', run: () => inTransaction(() => sql.spend.run(unique(), expires)) },
    { name: "Triad's withTransaction", run: () => withTransaction(payments, (trx) => vaultRepo.markSpent(trx, 'sqlite', unique(), expires)) },
  ])
  await measure("checkout cost: the final payment's database work, CPU per authorization (one at a time)", [
    { name: 'least work (1 transaction, 4 statements)', run: leastWorkAuthorization },
    { name: 'same statements on node:sqlite (2 transactions, 10 statements)', run: sameStatementsAuthorization },
    { name: "Triad's functions", run: triadAuthorization },
  ])
  await measure('checkout cost: one request log line (child logger, info, batched to a file), CPU per line', [
    {
      name: "Triad's logger",
      run: () => logger.child({ reqId: '8e257f93-c7c8-4698-9f74-1143b5aaa380' }).info({ method: 'POST', url: '/payments', status: 200, ms: 1.3, ip: '127.0.0.1' }, 'request completed'),
    },
  ])
} finally {
  await database.destroy()
  raw.close()
}
