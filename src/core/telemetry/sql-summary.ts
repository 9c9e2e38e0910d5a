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

/** Quoted names, string literals, parentheses and words, in order. */
const TOKENS = /"(?:[^"]|"")*"|'(?:[^']|'')*'|[()]|[\w.$]+/g

function unquoted(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name
}

export function summariseSql(text: string): SqlSummary {
  const tokens = text.match(TOKENS) ?? []
  const operation = (tokens[0] ?? 'QUERY').toUpperCase()
  const keyword = TARGET_KEYWORD[operation]
  if (keyword === undefined) return { operation }
  let depth = 0
  for (let index = 0; index < tokens.length - 1; index++) {
    const token = tokens[index]
    if (token === '(') depth++
    else if (token === ')') depth--
    else if (depth === 0 && token.toUpperCase() === keyword && !tokens[index + 1].startsWith("'") && tokens[index + 1] !== '(') {
      return { operation, collection: unquoted(tokens[index + 1]) }
    }
  }
  return { operation }
}

/** The span name the conventions give a statement: `{db.operation.name} {db.collection.name}`, or the operation alone. */
export function sqlSpanName(summary: SqlSummary): string {
  return summary.collection === undefined ? summary.operation : `${summary.operation} ${summary.collection}`
}
