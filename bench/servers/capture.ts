// Yardstick for a capture, POST /transactions/{id}/captures (issue 16). Per request: the API key
// from HTTP Basic to its app through a Map filled at start (Triad keeps authenticated keys in
// memory too), parse and validate the body ({amount}), then in one BEGIN IMMEDIATE … COMMIT of
// its own the statements Triad runs (same SQL, Triad's pragmas): read the transaction with its
// merchant's pricing and the app's membership, check the amount rule, insert the ledger line,
// move the merchant's balance shard, insert the trail entry, write the counters, read the trail
// back; then answer the whole transaction in Triad's bytes (built field by field).
// Each request commits on its own; Triad's group commit shares one COMMIT among the captures
// that arrive together.
import { config, inTransaction, openSqlite, serveCaptures, statements, timeOrderedId, transactionJson, type TrailRow, type TransactionRow } from './kit.ts'

const { database, apps } = config<{ database: string; apps: Record<string, string> }>()
const db = openSqlite(database)
const appOfKey = new Map(Object.entries(apps))
const sql = statements(db, {
  find: 'select "payments_transactions".*, "payments_merchants"."currency" as "m_currency", "payments_merchants"."fee_rate_ppm" as "m_fee_rate_ppm", "payments_merchants"."fee_flat" as "m_fee_flat", "payments_merchants"."dispute_fee" as "m_dispute_fee", exists (select "payments_merchant_apps"."app_id" from "payments_merchant_apps" where "payments_merchant_apps"."merchant_id" = "payments_transactions"."merchant_id" and "payments_merchant_apps"."app_id" = ?) as "member" from "payments_transactions" inner join "payments_merchants" on "payments_merchants"."id" = "payments_transactions"."merchant_id" where "payments_transactions"."id" = ?',
  line: 'insert into "payments_lines" ("id", "merchant_id", "test", "created", "kind", "balance", "fee", "description", "transaction_id", "amount_currency", "amount") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  balance: 'insert into "payments_balance_shards" ("merchant_id", "shard", "balance") values (?, ?, ?) on conflict ("merchant_id", "shard") do update set "balance" = "payments_balance_shards"."balance" + "excluded"."balance"',
  trail: 'insert into "payments_trail" ("id", "transaction_id", "kind", "created", "amount", "balance", "fee_flat", "fee_rate", "descriptor", "line_id", "dispute_id", "dispute_outcome", "actor_type", "actor_id") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \'app\', ?)',
  counters: 'update "payments_transactions" set "captured_amount" = ?, "refunded_amount" = ?, "voided_amount" = ?, "disputed_amount" = ?, "lost_amount" = ? where "id" = ?',
  readTrail: 'select * from "payments_trail" where "transaction_id" = ? order by "created" asc, "id" asc',
})

type Found = TransactionRow & { member: number; m_fee_rate_ppm: number; m_fee_flat: number }

await serveCaptures(appOfKey, (appId, id, amount) =>
  inTransaction(db, () => {
    const row = sql.find.get(appId, id) as Found | undefined
    if (!row || row.member !== 1) return undefined
    if (row.amount - row.captured_amount - row.voided_amount < amount) return undefined
    const created = new Date().toISOString()
    const rateFee = Math.ceil((amount * row.m_fee_rate_ppm) / 1_000_000)
    const balance = amount - row.m_fee_flat - rateFee
    const lineId = timeOrderedId()
    sql.line.run(lineId, row.merchant_id, row.test, created, 'capture', balance, row.m_fee_flat + rateFee, null, id, row.currency, amount)
    sql.balance.run(row.merchant_id, Number.parseInt(id.slice(-1), 16), balance)
    sql.trail.run(timeOrderedId(), id, 'capture', created, amount, balance, row.m_fee_flat, rateFee, row.descriptor, lineId, null, null, appId)
    row.captured_amount += amount
    sql.counters.run(row.captured_amount, row.refunded_amount, row.voided_amount, row.disputed_amount, row.lost_amount, id)
    return transactionJson(row, sql.readTrail.all(id) as unknown as TrailRow[])
  })
)
