/**
 * What OpenTelemetry's database conventions name a statement by: its operation (`SELECT`,
 * `INSERT`, …) and the table it works on (the first after FROM, INTO or UPDATE outside any
 * parentheses, so not a subquery's), for the span name `SELECT payments_transactions` and the
 * attributes `db.operation.name` and `db.collection.name`. Read from the statement text alone;
 * values are never in it (Kysely sends them as parameters).
 */
export interface SqlSummary {
  operation: string
  collection?: string
}

/** The keyword the table follows, per operation. */
const TARGET_KEYWORD: Record<string, string> = { SELECT: 'FROM', DELETE: 'FROM', INSERT: 'INTO', UPDATE: 'UPDATE' }

/** Quoted names, string literals, parentheses and words, in order (punctuation and operators skipped). */
const TOKENS = /"(?:[^"]|"")*"|'(?:[^']|'')*'|[()]|[\w.$]+/g

function unquoted(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name
}

/** Tokens with their parenthesis depth (0: the statement itself, not a subquery or a CTE's body). */
function tokensWithDepth(text: string): Array<{ token: string; depth: number }> {
  let depth = 0
  const tokens: Array<{ token: string; depth: number }> = []
  for (const token of text.match(TOKENS) ?? []) {
    if (token === '(') depth++
    else if (token === ')') depth--
    else tokens.push({ token, depth })
  }
  return tokens
}

export function summariseSql(text: string): SqlSummary {
  let tokens = tokensWithDepth(text)
  // `WITH … AS (…) INSERT …` is named by its main statement, after the CTEs.
  if (tokens[0]?.token.toUpperCase() === 'WITH') {
    const main = tokens.findIndex(({ token, depth }, index) => index > 0 && depth === 0 && token.toUpperCase() in TARGET_KEYWORD)
    if (main > 0) tokens = tokens.slice(main)
  }
  const operation = (tokens[0]?.token ?? 'QUERY').toUpperCase()
  const keyword = TARGET_KEYWORD[operation]
  if (keyword === undefined) return { operation }
  const at = tokens.findIndex(({ token, depth }) => depth === tokens[0].depth && token.toUpperCase() === keyword)
  const target = at >= 0 ? tokens[at + 1] : undefined
  if (target === undefined || target.depth !== tokens[0].depth || target.token.startsWith("'")) return { operation }
  return { operation, collection: unquoted(target.token) }
}

/** The span name the conventions give a statement: `{db.operation.name} {db.collection.name}`, or the operation alone. */
export function sqlSpanName(summary: SqlSummary): string {
  return summary.collection === undefined ? summary.operation : `${summary.operation} ${summary.collection}`
}
