// Node CPU per statement of GET /transactions/{id} on PostgreSQL (issue 36, item 1): Triad's
// database layer (the repository's reader, Kysely, core/db's pool wrapper with its named
// statements) against node-postgres alone running the same SELECT as a named statement, in one
// process, 5 statements in flight, alternating rounds. What is left between Triad and
// bench/servers/transaction-get-pg.ts beyond this is outside the database layer.
// Usage: node bench/pg-statement-path.ts [--rounds 12 --statements 4000 --smoke]
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import pg from 'pg'
import { systemClock } from '../src/core/clock.ts'
import { parsePostgresUrl, type PostgresHost } from '../src/core/db/postgres-url.ts'
import { reportRow, smoke } from './lib.ts'

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '12' }, statements: { type: 'string', default: '4000' }, smoke: { type: 'boolean', default: false } },
})
const rounds = smoke ? 2 : Number(values.rounds)
const statements = smoke ? 300 : Number(values.statements)
const command = 'node bench/pg-statement-path.ts'
// The test helpers read TEST_DATABASE_URL when first imported.
process.env.TEST_DATABASE_URL ??= process.env.TEST_PG_URL ?? 'postgres://127.0.0.1:5432/test'
process.env.LOG_LEVEL ??= 'silent'
const url = process.env.TEST_DATABASE_URL
const { authorize, merchantFixture } = await import('../test/services/payments/helpers.ts')
const { createTransactionReader } = await import('../src/services/payments/modules/transactions/transactions.repository.ts')

const TEXT =
  'select "payments_transactions".*, (exists (select "payments_merchant_apps"."app_id" from "payments_merchant_apps" where "payments_merchant_apps"."merchant_id" = "payments_transactions"."merchant_id" and "payments_merchant_apps"."app_id" = $1)) as "member", "payments_trail"."id" as "tr_id", "payments_trail"."kind" as "tr_kind", "payments_trail"."created" as "tr_created", "payments_trail"."amount" as "tr_amount", "payments_trail"."balance" as "tr_balance", "payments_trail"."fee_flat" as "tr_fee_flat", "payments_trail"."fee_rate" as "tr_fee_rate", "payments_trail"."descriptor" as "tr_descriptor", "payments_trail"."line_id" as "tr_line_id", "payments_trail"."dispute_id" as "tr_dispute_id", "payments_trail"."dispute_outcome" as "tr_dispute_outcome", "payments_trail"."actor_type" as "tr_actor_type", "payments_trail"."actor_id" as "tr_actor_id", "payments_trail"."actor_email" as "tr_actor_email" from "payments_transactions" left join "payments_trail" on "payments_trail"."transaction_id" = "payments_transactions"."id" where "payments_transactions"."id" = $2 order by "payments_trail"."created" asc, "payments_trail"."id" asc'

const cleanups: Array<() => unknown> = []
try {
  const fixture = await merchantFixture({ after: (fn) => void cleanups.push(fn) }, { env: { PAYMENTS_RATE_LIMIT: '0' } })
  const id = await authorize(fixture, fixture.merchant.id, { amount: 1000 })
  const appId = fixture.owner.id
  const read = createTransactionReader(fixture.database as never, { clock: systemClock, maxLagMs: 0 }, (row) => row)
  const { rows: schemaRows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(fixture.database.db)
  const parsed = parsePostgresUrl(url)
  const pool = new pg.Pool({ connectionString: parsed.forHost(parsed.hosts[0] as PostgresHost), max: 5, options: `-c search_path=${schemaRows[0]?.schema}` })
  cleanups.push(() => pool.end())
  const triad = () => read(id, appId)
  const alone = () => pool.query({ name: 'transaction_get', text: TEXT, values: [appId, id] })
  if (!(await triad()) || (await alone()).rows.length === 0) throw new Error('the transaction was not found')
  const cpuPerStatement = async (work: () => Promise<unknown>) => {
    const before = process.cpuUsage()
    let next = 0
    await Promise.all(Array.from({ length: 5 }, async () => {
      while (next++ < statements) await work()
    }))
    const used = process.cpuUsage(before)
    return (used.user + used.system) / statements
  }
  const t: number[] = []
  const a: number[] = []
  for (let round = 0; round < rounds; round++) {
    t.push(await cpuPerStatement(triad))
    a.push(await cpuPerStatement(alone))
    console.log(`  round ${round + 1}: Triad's database layer ${t[round]?.toFixed(1)} µs, node-postgres alone ${a[round]?.toFixed(1)} µs of Node CPU per statement`)
  }
  // The first half warms V8 up; the figure is the median of the second half.
  const median = (items: number[]) => {
    const warm = items.slice(Math.floor(items.length / 2)).sort((x, y) => x - y)
    return warm[Math.floor(warm.length / 2)] ?? Number.NaN
  }
  const differences = t.map((value, round) => value - (a[round] ?? Number.NaN))
  const figure =
    `${median(t).toFixed(0)} vs ${median(a).toFixed(0)} µs of Node CPU per statement; Triad's layer costs ${median(differences).toFixed(0)} µs more ` +
    `(medians of the warm half of ${rounds} rounds × ${statements}; a round's difference ${Math.min(...differences.slice(Math.floor(rounds / 2))).toFixed(0)} to ${Math.max(...differences.slice(Math.floor(rounds / 2))).toFixed(0)} µs)`
  console.log(`statement path: ${figure}`)
  reportRow({ benchmark: 'pg-statement-path', measure: "PostgreSQL, GET /transactions/{id}'s SELECT: Triad's database layer (reader, Kysely, core/db pool, named statement) vs node-postgres alone (named statement)", target: '—', figure, met: null, command })
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
