// Bulk seeding for bench/growth.ts: rows shaped exactly as Triad's repositories write them
// (the tables' own row types, time-ordered ids from Triad's generator, the ledger's fee rule),
// inserted many rows per statement straight into the tables of a migrated database. A million
// rows take seconds on SQLite and a few minutes on PostgreSQL, where one by one through the
// services would take hours.
import { randomBytes } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { DialectName } from '../src/core/db/create-db.ts'
import { createIdGenerator } from '../src/core/ids.ts'
import { rateOf } from '../src/services/payments/money/fx.ts'
import type { LineRow, PaymentsTables, TrailRow, TransactionRow } from '../src/services/payments/tables.ts'
import type { ChatTables } from '../src/services/avatar/modules/sessions/sessions.table.ts'

/** Most bound parameters per statement, under SQLite's limit (32 766). */
const MAX_PARAMETERS = 30_000
/** Rows per statement on PostgreSQL, where each column is one array parameter. */
const PG_BATCH = 10_000

/**
 * Inserts rows produced by `make(index)` for index 0 … count-1. SQLite: multi-row VALUES, as
 * many rows per statement as its parameter limit allows. PostgreSQL: one array per column,
 * spread back into rows by `unnest` (parsing a VALUES list of 30 000 parameters cost PostgreSQL
 * ten times as long as the insert itself). A column that is null in every row of a batch is
 * left to its default, null.
 */
async function insertMany<DB, T extends keyof DB & string>(
  db: Kysely<DB>,
  dialect: DialectName,
  table: T,
  count: number,
  columns: number,
  make: (index: number) => DB[T],
): Promise<void> {
  const batch = dialect === 'postgres' ? PG_BATCH : Math.max(1, Math.floor(MAX_PARAMETERS / columns))
  for (let start = 0; start < count; start += batch) {
    const rows: DB[T][] = []
    for (let index = start; index < Math.min(count, start + batch); index++) rows.push(make(index))
    if (dialect === 'postgres') {
      const names = Object.keys(rows[0] as object)
      const arrays = names.map((name) => rows.map((row) => (row as Record<string, unknown>)[name] ?? null))
      const used = names.map((name, index) => ({ name, values: arrays[index] })).filter((column) => column.values.some((value) => value !== null))
      const arrayType = (values: unknown[]) => (typeof values.find((value) => value !== null) === 'number' ? 'int8[]' : 'text[]')
      await sql`insert into ${sql.table(table)} (${sql.join(used.map((column) => sql.ref(column.name)))})
        select * from unnest(${sql.join(used.map((column) => sql`${column.values}::${sql.raw(arrayType(column.values))}`))})`.execute(db)
      continue
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's insert typing cannot follow a generic table.
    await (db as Kysely<any>).insertInto(table).values(rows).execute()
  }
}

/** A clock at a settable instant, for ids whose time part matches each row's creation time. */
function steppedClock() {
  let at = new Date()
  return { clock: { now: () => at }, set: (date: Date) => (at = date) }
}

const DAY_MS = 86_400_000

export interface PaymentsSeed {
  /** Transactions of the measured merchant, captured once (a trail entry each): for GET /transactions/{id}. */
  readProbes: string[]
  /** Untouched authorizations of the measured merchant with room for many 1-cent captures. */
  captureProbes: string[]
  /** A `before` cursor near the oldest end of the measured merchant's list: a deep page. */
  deepCursor: string
}

/**
 * `count` transactions over the last 30 days, alternating between the measured merchant and
 * another one (so the merchant index, not the table's order, finds a merchant's rows); every
 * other transaction of each is captured in full (a ledger line, a trail entry, the balance).
 * Probes are spread evenly over the id range.
 */
export async function seedPayments(
  db: Kysely<PaymentsTables>,
  dialect: DialectName,
  options: { count: number; merchantIds: [string, string]; probes: number; page: number },
): Promise<PaymentsSeed> {
  const { count, merchantIds } = options
  const merchants = await db.selectFrom('payments_merchants').select(['id', 'test', 'descriptor', 'currency', 'fee_rate_ppm', 'fee_flat']).where('id', 'in', merchantIds).execute()
  const pricing = new Map(merchants.map((merchant) => [merchant.id, merchant]))
  const stepped = steppedClock()
  const ids = createIdGenerator(stepped.clock)
  const start = Date.now() - 30 * DAY_MS
  const step = (30 * DAY_MS) / count
  const captured = (index: number) => (index >> 1) % 2 === 0
  const amountOf = (index: number) => 10_000 + ((index * 7919) % 990_000)

  // Built first so that the trail and the lines can refer to them.
  const transactions: TransactionRow[] = new Array(count)
  for (let index = 0; index < count; index++) {
    const at = new Date(start + index * step)
    stepped.set(at)
    const merchant = pricing.get(merchantIds[index % 2])
    if (!merchant) throw new Error('seed merchants missing')
    const amount = amountOf(index)
    transactions[index] = {
      id: ids.timeOrdered(),
      merchant_id: merchant.id,
      test: merchant.test,
      created: at.toISOString(),
      currency: merchant.currency,
      amount,
      descriptor: merchant.descriptor,
      captured_amount: captured(index) ? amount : 0,
      refunded_amount: 0,
      voided_amount: 0,
      disputed_amount: 0,
      lost_amount: 0,
      card_bin: '410000',
      card_last4: String(1000 + (index % 9000)),
      card_expiry: '2030-08',
      card_scheme: 'visa',
      card_code_present: 1,
      card_ref: null,
      custom: index % 3 === 0 ? JSON.stringify({ orderId: `order-${index}` }) : null,
      text: null,
      tds: null,
      recurring: 0,
      successful: 1,
      error: null,
      source_transaction_id: null,
    }
  }
  await insertMany(db, dialect, 'payments_transactions', count, 25, (index) => transactions[index])

  const capturedIndexes = transactions.map((_, index) => index).filter(captured)
  const lines: LineRow[] = []
  const trail: TrailRow[] = []
  const balances = new Map<string, number>()
  for (const index of capturedIndexes) {
    const row = transactions[index]
    const merchant = pricing.get(row.merchant_id)
    if (!merchant) throw new Error('seed merchants missing')
    const at = new Date(Date.parse(row.created) + 60_000)
    stepped.set(at)
    const feeRate = rateOf(row.amount, merchant.fee_rate_ppm)
    const balance = row.amount - merchant.fee_flat - feeRate
    const line: LineRow = {
      id: ids.timeOrdered(),
      merchant_id: row.merchant_id,
      test: row.test,
      created: at.toISOString(),
      kind: 'capture',
      balance,
      fee: merchant.fee_flat + feeRate,
      description: null,
      transaction_id: row.id,
      amount_currency: row.currency,
      amount: row.amount,
    }
    lines.push(line)
    trail.push({
      id: ids.timeOrdered(),
      transaction_id: row.id,
      kind: 'capture',
      created: line.created,
      amount: row.amount,
      balance,
      fee_flat: merchant.fee_flat,
      fee_rate: feeRate,
      descriptor: row.descriptor,
      line_id: line.id,
      dispute_id: null,
      dispute_outcome: null,
      actor_type: null,
      actor_id: null,
      actor_email: null,
    })
    balances.set(row.merchant_id, (balances.get(row.merchant_id) ?? 0) + balance)
  }
  await insertMany(db, dialect, 'payments_lines', lines.length, 11, (index) => lines[index])
  await insertMany(db, dialect, 'payments_trail', trail.length, 12, (index) => trail[index])
  for (const [merchantId, balance] of balances) {
    await db
      .insertInto('payments_balance_shards')
      .values({ merchant_id: merchantId, shard: 0, balance })
      .onConflict((oc) => oc.columns(['merchant_id', 'shard']).doUpdateSet((eb) => ({ balance: eb('payments_balance_shards.balance', '+', eb.ref('excluded.balance')) })))
      .execute()
  }

  // Probes: the measured merchant's rows (even indexes), evenly spread.
  const ofMeasured = transactions.filter((row) => row.merchant_id === merchantIds[0])
  const spread = <T>(items: T[], n: number) => Array.from({ length: Math.min(n, items.length) }, (_, k) => items[Math.floor(((k + 0.5) * items.length) / Math.min(n, items.length))])
  const readProbes = spread(
    ofMeasured.filter((row) => row.captured_amount > 0),
    options.probes,
  ).map((row) => row.id)
  const captureProbes = spread(
    ofMeasured.filter((row) => row.captured_amount === 0),
    options.probes,
  ).map((row) => row.id)
  // Newest first, so the deep end is the oldest: the cursor 1 % from it, but never so close that
  // the page is short (at 10^3, 1 % leaves 5 older rows: a page of 5 is not a page of 50).
  const deepCursor = ofMeasured[Math.max(Math.floor(ofMeasured.length * 0.01), options.page)]?.id ?? ofMeasured[0].id
  return { readProbes, captureProbes, deepCursor }
}

export interface AvatarSeed {
  /** Sessions of `historyLength` messages each, for GET /v1/session/{id}/history. */
  historyProbes: string[]
  /** A `before` cursor (a session id) 90 % of the way down the newest-first list: a deep page. */
  deepCursor: string
  sessions: number
}

/**
 * `messages` chat messages across `sessions` sessions, all active (last activity within the
 * last day of a 10-day span; the benchmark sets a TTL longer than that). The probe sessions hold
 * exactly `historyLength` messages at every size, so the history read returns the same bytes
 * whatever the table holds; the other sessions share the rest.
 */
export async function seedAvatar(
  db: Kysely<ChatTables>,
  dialect: DialectName,
  options: { messages: number; sessions: number; probes: number; historyLength: number },
): Promise<AvatarSeed> {
  const { messages, sessions, probes, historyLength } = options
  const start = Date.now() - 10 * DAY_MS
  const step = (9 * DAY_MS) / sessions
  const prefix = randomBytes(4).toString('hex')
  const id = (index: number) => `ses_${prefix}${String(index).padStart(8, '0')}`
  const probeEvery = Math.max(1, Math.floor(sessions / probes))
  const isProbe = (index: number) => index % probeEvery === 0 && index / probeEvery < probes
  const probeIndexes = Array.from({ length: sessions }, (_, index) => index).filter(isProbe)
  const rest = Math.max(0, messages - probeIndexes.length * historyLength)
  const others = sessions - probeIndexes.length
  const counts: number[] = []
  let rank = 0
  for (let index = 0; index < sessions; index++) {
    if (isProbe(index)) counts.push(historyLength)
    else counts.push(Math.max(1, Math.floor(rest / others) + (rank++ < rest % others ? 1 : 0)))
  }
  const created = (index: number) => new Date(start + index * step)
  await insertMany(db, dialect, 'avatar_sessions', sessions, 4, (index) => ({
    id: id(index),
    created_at: created(index).toISOString(),
    last_active_at: new Date(created(index).getTime() + DAY_MS / 2 + (counts[index] - 1) * 30_000).toISOString(),
    message_count: counts[index],
  }))
  // Messages in (session, seq) order, alternating user and assistant as a chat turn writes them.
  const offsets: number[] = []
  let total = 0
  for (const count of counts) {
    offsets.push(total)
    total += count
  }
  let session = 0
  await insertMany(db, dialect, 'avatar_messages', total, 7, (index) => {
    while (session + 1 < sessions && offsets[session + 1] <= index) session++
    while (session > 0 && offsets[session] > index) session--
    const seq = index - offsets[session] + 1
    const assistant = seq % 2 === 0
    return {
      session_id: id(session),
      seq,
      role: assistant ? ('assistant' as const) : ('user' as const),
      content: assistant ? `That is a fine question. Here is a reply of a usual length, number ${seq}.` : `Tell me something, please (${seq}).`,
      emotion: assistant ? 'happy' : null,
      action: assistant ? 'speak' : null,
      created_at: new Date(created(session).getTime() + (seq - 1) * 30_000).toISOString(),
    }
  })
  const historyProbes = probeIndexes.map(id)
  return { historyProbes, deepCursor: id(Math.floor(sessions * 0.1)), sessions }
}
