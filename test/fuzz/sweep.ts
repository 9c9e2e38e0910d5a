import { type Credentials, type FuzzRequest, headerValue, type JsonSchema, type Operation, percentEncode, plausibleValue, READ_HEADERS } from './requests.ts'

/**
 * The systematic half of the fuzz suite: each string a request of each operation carries (every
 * body field at any depth, every query and path parameter, the headers routes read) is given
 * each hostile text in turn, the rest of the request plausible and authenticated, so that the
 * text reaches as far into the route as it can. Random requests could miss a field; this cannot.
 */

/** Lone surrogates at the start, middle and end; NUL and other controls; other scripts; over-long text. */
export const HOSTILE_TEXTS = [
  '\ud800id',
  'i\ud800d',
  'id\ud800',
  '\udfffid',
  'i\udfffd',
  'id\udfff',
  '\u0000',
  'a\u0000b',
  'a\u0001\u0007\b\t\n\r\u000b\u001b\u007f\u0085\u009fb',
  'مرحبا \u202eשלום\u200f e\u0301\u0302 \u200b\u200d\ufeff 👩\u200d👩\u200d👧 🇩🇰 你好世界 𠜎',
  // An emoji across a cut at 64 or 128 UTF-16 units, and 65 emoji: 65 characters but 130 units.
  `${'a'.repeat(63)}😀`,
  `${'a'.repeat(127)}😀`,
  '😀'.repeat(65),
  'é'.repeat(5001),
  'x'.repeat(20_000),
]

/** What a header can carry of them (latin1 bytes), plus raw bytes and a lone surrogate's WTF-8 bytes. */
const HOSTILE_HEADER_VALUES = [
  headerValue(HOSTILE_TEXTS[9] as string),
  headerValue('\ud800'),
  '\u00ed\u00a0\u0080',
  '\u0080\u00ff \u00e9\u00a0\u00ad\t\u00c3',
]

/** The body fields (paths) whose schema takes a string, at any depth; `*` is a new key of an open object. */
function stringFields(schema: JsonSchema | undefined, path: string[] = [], depth = 0): string[][] {
  if (!schema || depth > 4) return []
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives) return alternatives.flatMap((alternative) => stringFields(alternative, path, depth + 1))
  const types = schema.type === undefined ? [] : [schema.type].flat()
  if (schema.type === 'array' && schema.items) return stringFields(schema.items, [...path, '0'], depth + 1)
  if (schema.properties) {
    const fields = Object.entries(schema.properties).flatMap(([name, property]) => stringFields(property, [...path, name], depth + 1))
    return [...fields, [...path, '*']]
  }
  return types.length === 0 || types.includes('string') ? [path] : []
}

function withField(body: unknown, path: string[], value: unknown): unknown {
  const [head, ...rest] = path
  if (head === undefined) return value
  const container = (typeof body === 'object' && body !== null ? structuredClone(body) : head === '0' ? [] : {}) as Record<string, unknown>
  // A new key of an open object: the hostile text is the key.
  if (head === '*') return { ...container, [String(value)]: 'x' }
  container[head] = withField(container[head], rest, value)
  return container
}

function uniqueFields(fields: string[][]): string[][] {
  return [...new Map(fields.map((field) => [field.join('.'), field])).values()]
}

/** The requests of the sweep, for `operations`, in order. */
export function sweepRequests(operations: Operation[], credentials: Credentials): FuzzRequest[] {
  const requests: FuzzRequest[] = []
  for (const operation of operations) {
    // Path and query values in URL form.
    const ids = Object.fromEntries(operation.pathParams.map((name) => [name, encodeURIComponent(credentials.idFor(name))]))
    const query = Object.fromEntries(operation.query.map(({ name, schema }) => [name, encodeURIComponent(String(plausibleValue(schema)))]))
    const body = operation.body ? plausibleValue(operation.body) : undefined
    const base = (change: { ids?: Record<string, string>; query?: Record<string, string>; body?: unknown; headers?: Record<string, string> }, note: string): FuzzRequest => {
      let path = operation.path
      for (const [name, value] of Object.entries({ ...ids, ...change.ids })) path = path.replace(`{${name}}`, value)
      const pairs = Object.entries({ ...query, ...change.query }).map(([name, value]) => `${encodeURIComponent(name)}=${value}`)
      const sent = 'body' in change ? change.body : body
      const headers = { ...credentials.headersFor(operation.path), ...(sent === undefined ? {} : { 'content-type': 'application/json' }), ...change.headers }
      return {
        method: operation.method,
        url: `${path}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`,
        headers,
        payload: sent === undefined ? undefined : JSON.stringify(sent),
        note: `${operation.method} ${operation.path} (sweep: ${note})`,
      }
    }
    for (const text of HOSTILE_TEXTS) {
      const shown = JSON.stringify(text.length > 20 ? `${text.slice(0, 10)}…(${text.length})` : text)
      for (const name of operation.pathParams) requests.push(base({ ids: { [name]: percentEncode(text) } }, `path ${name} = ${shown}`))
      for (const { name } of operation.query) requests.push(base({ query: { [name]: percentEncode(text) } }, `query ${name} = ${shown}`))
      for (const field of uniqueFields(stringFields(operation.body))) requests.push(base({ body: withField(body, field, text) }, `body ${field.join('.')} = ${shown}`))
    }
    for (const [index, value] of HOSTILE_HEADER_VALUES.entries()) {
      const shown = JSON.stringify(value)
      const valid = credentials.headersFor(operation.path)
      const others = Object.fromEntries(READ_HEADERS.filter((name) => !(name in valid)).map((name) => [name, value]))
      requests.push(base({ headers: others }, `headers = ${shown}`))
      // The credentials themselves, a bearer token and cookies or a Basic key by turns.
      const credentialsHeaders: Record<string, string> =
        index % 2 === 0
          ? { authorization: `Bearer ${value}`, cookie: `DSPACE-XSRF-COOKIE=${value}; dashboard=${value}`, 'x-xsrf-token': value }
          : { authorization: `Basic ${Buffer.from(`:${value}`, 'latin1').toString('base64')}` }
      requests.push(base({ headers: credentialsHeaders }, `credentials = ${shown}`))
    }
  }
  return requests
}
