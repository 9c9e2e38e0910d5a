import assert from 'node:assert/strict'

/** Runs one statement on a connection of the test's own and answers its rows. */
export type DirectQuery = (text: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>

/**
 * After a fault, read over a connection of the test's own: every acknowledged capture (201) is
 * stored and no other, beyond those whose outcome was unknown (504); never more than authorized;
 * each with its ledger line and trail entry (a movement all or none). Answers the amount acknowledged.
 */
export async function assertCapturesIntact(
  query: DirectQuery,
  options: { transactionId: string; capture: number; authorized: number; statuses: number[] },
): Promise<{ acknowledged: number }> {
  const { transactionId, capture } = options
  const acknowledged = options.statuses.filter((status) => status === 201).length * capture
  const unknown = options.statuses.filter((status) => status === 504).length * capture
  const [row] = await query('select captured_amount from payments_transactions where id = $1', [transactionId])
  const stored = Number(row?.captured_amount)
  assert.ok(stored >= acknowledged && stored <= acknowledged + unknown, `captured ${stored}, acknowledged ${acknowledged} (+${unknown} unknown)`)
  assert.ok(stored <= options.authorized)
  for (const [table, what] of [
    ['payments_lines', 'one ledger line per capture'],
    ['payments_trail', 'one trail entry per capture'],
  ]) {
    const [sums] = await query(`select coalesce(sum(amount), 0)::int8 as total, count(*)::int8 as count from ${table} where transaction_id = $1 and kind = 'capture'`, [transactionId])
    assert.deepEqual({ total: Number(sums?.total), count: Number(sums?.count) }, { total: stored, count: stored / capture }, what)
  }
  return { acknowledged }
}
