// PostgreSQL yardstick for GET /transactions/{id} (issue 36, item 1): the least work the route
// needs on PostgreSQL. Per request: the API key from HTTP Basic to its app through a Map filled
// at start (Triad keeps authenticated keys in memory too), then ONE prepared statement (a
// node-postgres named statement, parsed once per connection) over a pool of 10 connections, as
// Triad's: Triad's own SELECT of the transaction with the app's membership and the trail joined;
// a non-member refused; Triad's bytes built field by field. Its connections carry the
// application_name `yardstick`, so that bench/pg-yardsticks.ts tells their backends from Triad's.
import pg from 'pg'
import { bareFastify, basicKey, config, serve, transactionJson, type TrailRow, type TransactionRow } from './kit.ts'

const { url, apps } = config<{ url: string; apps: Record<string, string> }>()
// int8 as numbers, as Triad reads them (core/db/create-db.ts).
pg.types.setTypeParser(pg.types.builtins.INT8, Number)
const pool = new pg.Pool({ connectionString: url, max: 10, application_name: 'yardstick' })
const appOfKey = new Map(Object.entries(apps))
const SELECT = {
  name: 'transaction_get',
  text: 'select "payments_transactions".*, exists (select "payments_merchant_apps"."app_id" from "payments_merchant_apps" where "payments_merchant_apps"."merchant_id" = "payments_transactions"."merchant_id" and "payments_merchant_apps"."app_id" = $1) as "member", "payments_trail"."id" as "tr_id", "payments_trail"."kind" as "tr_kind", "payments_trail"."created" as "tr_created", "payments_trail"."amount" as "tr_amount", "payments_trail"."balance" as "tr_balance", "payments_trail"."fee_flat" as "tr_fee_flat", "payments_trail"."fee_rate" as "tr_fee_rate", "payments_trail"."descriptor" as "tr_descriptor", "payments_trail"."line_id" as "tr_line_id", "payments_trail"."dispute_id" as "tr_dispute_id", "payments_trail"."dispute_outcome" as "tr_dispute_outcome", "payments_trail"."actor_type" as "tr_actor_type", "payments_trail"."actor_id" as "tr_actor_id", "payments_trail"."actor_email" as "tr_actor_email" from "payments_transactions" left join "payments_trail" on "payments_trail"."transaction_id" = "payments_transactions"."id" where "payments_transactions"."id" = $2 order by "payments_trail"."created" asc, "payments_trail"."id" asc',
}

type Joined = TransactionRow & { member: boolean; tr_id: string | null; tr_created: string; tr_amount: number; tr_balance: number; tr_fee_flat: number; tr_fee_rate: number; tr_descriptor: string | null; tr_line_id: string | null; tr_actor_id: string | null }

const app = bareFastify()
app.get('/transactions/:id', async (request, reply) => {
  const appId = appOfKey.get(basicKey(request.headers.authorization) ?? '')
  if (!appId) return reply.code(401).send()
  const { rows } = await pool.query<Joined>({ ...SELECT, values: [appId, (request.params as { id: string }).id] })
  const [first] = rows
  if (!first) return reply.code(404).send()
  if (!first.member) return reply.code(403).send()
  const trail: TrailRow[] = first.tr_id === null ? [] : rows.map((row) => ({ created: row.tr_created, amount: row.tr_amount, balance: row.tr_balance, fee_flat: row.tr_fee_flat, fee_rate: row.tr_fee_rate, descriptor: row.tr_descriptor, line_id: row.tr_line_id, actor_id: row.tr_actor_id }))
  return reply.type('application/json; charset=utf-8').send(transactionJson(first, trail))
})
app.addHook('onClose', async function endPool() {
  await pool.end()
})
await serve(app)
