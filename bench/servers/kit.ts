// What the same-work yardsticks of bench/servers share (issue 16): no Triad code, only Fastify,
// node:sqlite and the standard library. Each yardstick is a bare Fastify server in its own
// process, configured by a JSON file (YARDSTICK_CONFIG) that bench/yardsticks.ts writes after
// preparing Triad: the database copy to work on, the bytes Triad answered, keys.
import Fastify, { type FastifyInstance } from 'fastify'
import { randomFillSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { DatabaseSync, type StatementSync } from 'node:sqlite'

/** The yardstick's configuration, as bench/yardsticks.ts wrote it. */
export function config<T>(): T {
  const path = process.env.YARDSTICK_CONFIG
  if (!path) throw new Error('YARDSTICK_CONFIG names no configuration file')
  return JSON.parse(readFileSync(path, 'utf8')) as T
}

/**
 * A SQLite connection with Triad's pragmas and durability (src/core/db/node-sqlite-dialect.ts):
 * a 5 s busy timeout, WAL, synchronous = NORMAL, foreign keys on.
 */
export function openSqlite(path: string): DatabaseSync {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true })
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  return db
}

/** Runs `work` in one BEGIN IMMEDIATE … COMMIT of its own (Triad's writers take the lock at BEGIN too). */
export function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('begin immediate')
  try {
    const result = work()
    db.exec('commit')
    return result
  } catch (error) {
    if (db.isTransaction) db.exec('rollback')
    throw error
  }
}

/** Prepared statements by name, prepared once. */
export function statements<K extends string>(db: DatabaseSync, sql: Record<K, string>): Record<K, StatementSync> {
  return Object.fromEntries(Object.entries(sql).map(([name, text]) => [name, db.prepare(text as string)])) as Record<K, StatementSync>
}

/** A bare Fastify instance: no logger, no hooks, no plugins. */
export function bareFastify(): FastifyInstance {
  return Fastify({ logger: false })
}

/**
 * A capture yardstick's server: POST /transactions/{id}/captures with Triad's body schema, the
 * API key to its app through `apps`; `capture` answers the body (201) or undefined (400).
 */
export async function serveCaptures(apps: Map<string, string>, capture: (appId: string, id: string, amount: number) => string | undefined): Promise<void> {
  const app = bareFastify()
  app.post(
    '/transactions/:id/captures',
    { schema: { body: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer', minimum: 1 }, currency: { type: 'string' }, descriptor: { type: 'string' } } } } },
    async (request, reply) => {
      const appId = apps.get(basicKey(request.headers.authorization) ?? '')
      if (!appId) return reply.code(401).send()
      const body = capture(appId, (request.params as { id: string }).id, (request.body as { amount: number }).amount)
      if (body === undefined) return reply.code(400).send()
      return reply.code(201).type('application/json; charset=utf-8').send(body)
    },
  )
  await serve(app)
}

/** Listens on a free port of 127.0.0.1, prints the URL for the driver, and closes on SIGTERM. */
export async function serve(app: FastifyInstance): Promise<void> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  process.stdout.write(`${address}\n`)
  process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
}

/** The API key of an HTTP Basic header (empty user name, the key as password), or undefined. */
export function basicKey(header: string | undefined): string | undefined {
  if (!header?.startsWith('Basic ')) return undefined
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : decoded.slice(colon + 1) || decoded.slice(0, colon)
}

/** A payments transaction row as SQLite returns it (the columns the JSON needs). */
export interface TransactionRow {
  id: string
  merchant_id: string
  test: number
  created: string
  currency: string
  amount: number
  descriptor: string
  captured_amount: number
  refunded_amount: number
  voided_amount: number
  disputed_amount: number
  lost_amount: number
  card_bin: string | null
  card_last4: string | null
  card_expiry: string | null
  card_scheme: string | null
  card_code_present: number
  tds: string | null
  recurring: number
  successful: number
}

/** A capture's trail entry as SQLite returns it. */
export interface TrailRow {
  created: string
  amount: number
  balance: number
  fee_flat: number
  fee_rate: number
  descriptor: string | null
  line_id: string | null
  /** The app that captured (the yardsticks' captures are all an app's: no user's e-mail). */
  actor_id: string | null
}

/** A capture's trail entry in Triad's bytes. */
export function trailEntryJson(entry: TrailRow): string {
  const actor = entry.actor_id === null ? '' : `,"actor":{"type":"app","id":${JSON.stringify(entry.actor_id)}}`
  return `{"created":${JSON.stringify(entry.created)},"amount":${entry.amount},"balance":${entry.balance},"fee":{"flat":${entry.fee_flat},"rate":${entry.fee_rate}},"capture":true,"descriptor":${JSON.stringify(entry.descriptor)},"lineId":${JSON.stringify(entry.line_id)}${actor}}`
}

/**
 * The JSON Triad answers for a transaction of a test card payment with captures on its trail,
 * field for field in Triad's order (bench/yardsticks.ts checks the bytes are Triad's).
 */
export function transactionJson(row: TransactionRow, trail: TrailRow[]): string {
  return transactionJsonWithTrail(row, `[${trail.map(trailEntryJson).join(',')}]`)
}

/** The same, with the trail given as its JSON array. */
export function transactionJsonWithTrail(row: TransactionRow, trailJson: string): string {
  const pending = row.amount - row.captured_amount - row.voided_amount
  return (
    `{"transaction":{"id":${JSON.stringify(row.id)},"merchantId":${JSON.stringify(row.merchant_id)},"test":${row.test === 1},"created":${JSON.stringify(row.created)},` +
    `"currency":${JSON.stringify(row.currency)},"amount":${row.amount},"descriptor":${JSON.stringify(row.descriptor)},"pendingAmount":${pending},` +
    `"capturedAmount":${row.captured_amount},"refundedAmount":${row.refunded_amount},"voidedAmount":${row.voided_amount},"disputedAmount":${row.disputed_amount},` +
    `"recurring":${row.recurring === 1},"successful":${row.successful === 1},"error":false,"trail":${trailJson},` +
    `"card":{"bin":${JSON.stringify(row.card_bin)},"last4":${JSON.stringify(row.card_last4)},"expiry":${JSON.stringify(row.card_expiry)},"scheme":${JSON.stringify(row.card_scheme)},"code":{"present":${row.card_code_present === 1}}}` +
    `${row.tds === null ? '' : `,"tds":${JSON.stringify(row.tds)}`}}}`
  )
}

let idCounter = 0
/** A 24-hex-digit id ordered by time, the shape of Triad's ids. */
export function timeOrderedId(): string {
  return `${Date.now().toString(16).padStart(12, '0')}${(idCounter++ & 0xffffffffffff).toString(16).padStart(12, '0')}`
}

const pool = Buffer.alloc(4096)
let poolOffset = pool.length
/**
 * Random bytes (IVs) cut from a 4 KiB pool that randomFillSync refills, as Node's randomUUID
 * pools its entropy: `crypto.randomBytes` costs a getpid system call per call (OpenSSL's fork
 * check), as much as the AES-GCM seal it feeds. Each byte is handed out once.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size))
  pool.fill(0, poolOffset, poolOffset + size)
  poolOffset += size
  return bytes
}
