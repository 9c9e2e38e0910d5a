// Least-work yardstick for a capture, POST /transactions/{id}/captures (issue 27): only what the
// specification requires, designed for this one route. The API key to its app through a Map,
// the merchants' pricing kept in memory from the start; per request, in one BEGIN IMMEDIATE …
// COMMIT of its own: one conditional UPDATE of the counters (captured + amount within the
// amount, a successful transaction, the app a member of its merchant) that also appends the
// trail entry to a JSON column of the row and returns the whole row, and one INSERT of the
// ledger line; then the whole transaction in Triad's bytes. No balance shard, no webhook event,
// no trail table, no read before the write: what Triad does beyond this is what its promises cost.
import { config, inTransaction, openSqlite, serveCaptures, statements, timeOrderedId, transactionJsonWithTrail, type TransactionRow } from './kit.ts'

const { database, apps } = config<{ database: string; apps: Record<string, string> }>()
const db = openSqlite(database)
const appOfKey = new Map(Object.entries(apps))
db.exec(`alter table "payments_transactions" add column "trail_json" text not null default '[]'`)
const pricing = new Map(
  (db.prepare('select "id", "fee_flat", "fee_rate_ppm" from "payments_merchants"').all() as Array<{ id: string; fee_flat: number; fee_rate_ppm: number }>).map((row) => [row.id, row]),
)
const sql = statements(db, {
  capture: `update "payments_transactions" set "captured_amount" = "captured_amount" + :amount,
      "trail_json" = json_insert("trail_json", '$[#]', json_object('created', :created, 'amount', :amount,
        'balance', :amount - m."fee_flat" - (:amount * m."fee_rate_ppm" + 999999) / 1000000,
        'fee', json_object('flat', m."fee_flat", 'rate', (:amount * m."fee_rate_ppm" + 999999) / 1000000),
        'capture', json('true'), 'descriptor', "payments_transactions"."descriptor", 'lineId', :lineId,
        'actor', json_object('type', 'app', 'id', :appId)))
    from "payments_merchants" as m
    where "payments_transactions"."id" = :id and m."id" = "payments_transactions"."merchant_id" and "successful" = 1
      and "amount" - "captured_amount" - "voided_amount" >= :amount
      and exists (select 1 from "payments_merchant_apps" as a where a."merchant_id" = "payments_transactions"."merchant_id" and a."app_id" = :appId)
    returning *`,
  line: 'insert into "payments_lines" ("id", "merchant_id", "test", "created", "kind", "balance", "fee", "description", "transaction_id", "amount_currency", "amount") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
})

await serveCaptures(appOfKey, (appId, id, amount) =>
  inTransaction(db, () => {
    const created = new Date().toISOString()
    const lineId = timeOrderedId()
    const row = sql.capture.get({ amount, created, lineId, id, appId }) as (TransactionRow & { trail_json: string }) | undefined
    if (!row) return undefined
    const merchant = pricing.get(row.merchant_id)
    if (!merchant) throw new Error(`no pricing for merchant ${row.merchant_id}`)
    const rateFee = Math.ceil((amount * merchant.fee_rate_ppm) / 1_000_000)
    sql.line.run(lineId, row.merchant_id, row.test, created, 'capture', amount - merchant.fee_flat - rateFee, merchant.fee_flat + rateFee, null, id, row.currency, amount)
    return transactionJsonWithTrail(row, row.trail_json)
  })
)
