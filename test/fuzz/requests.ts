import fc from 'fast-check'
import qs from 'qs'

/**
 * Malformed requests for every operation of the OpenAPI document: hostile path identifiers,
 * wrong types and unrepresentable numbers in queries and bodies, broken and deeply nested
 * JSON, wrong content types and methods, odd and oversized headers, and hostile text (lone
 * surrogates, NUL and other controls, other scripts, over-long) in every string the request
 * carries: body fields at any depth, query values, path parameters and headers.
 */

export interface Operation {
  method: string
  /** The OpenAPI path, `{name}` for each parameter. */
  path: string
  pathParams: string[]
  query: Array<{ name: string; schema: JsonSchema }>
  body?: JsonSchema
}

export interface JsonSchema {
  type?: string | string[]
  format?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
}

export interface FuzzRequest {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string
  /** What the request is, for a failure report. */
  note: string
}

/** The operations of an OpenAPI 3 document (as /docs/json serves it). */
export function operationsOf(document: { paths: Record<string, Record<string, Record<string, unknown>>> }): Operation[] {
  const operations: Operation[] = []
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string; schema: JsonSchema }>
      const content = (operation.requestBody as { content?: Record<string, { schema: JsonSchema }> } | undefined)?.content
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string),
        query: parameters.filter((parameter) => parameter.in === 'query').map(({ name, schema }) => ({ name, schema })),
        body: content ? Object.values(content)[0]?.schema : undefined,
      })
    }
  }
  return operations
}

const LONE_SURROGATES = ['\ud800', '\udfff']

/**
 * Pieces of text that naive code mishandles: lone surrogates (UTF-8 has no bytes for them,
 * `encodeURIComponent` throws), NUL (PostgreSQL text cannot hold it) and other controls,
 * right-to-left text and overrides, combining marks, zero-width characters, emoji (two UTF-16
 * units, four UTF-8 bytes, some several code points), CJK, and characters that change length
 * under case mapping or normalization.
 */
const FRAGMENTS = [
  ...LONE_SURROGATES,
  '\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\r', '\u000b', '\u001b', '\u007f', '\u0085', '\u009f',
  'مرحبا', 'שלום', '\u202e', '\u200f', '\u2066', 'e\u0301\u0302\u0303', 'Z\u0336\u0337\u0338', '\u200b', '\u200d', '\ufeff', '\u2028', '\u2029',
  '😀', '👩\u200d👩\u200d👧\u200d👦', '🇩🇰', '你好世界', '𠜎', 'ｆｕｌｌ', 'İ', 'ß', 'ﬁ', '\ufffd', '\uffff', 'x', ' ', '%', '"', '\\', '<', "'",
]

/** A piece repeated past the limits, counted in characters, UTF-16 units and bytes alike. */
const overLong = fc
  .tuple(fc.constantFrom('a', 'é', '😀', '你', 'e\u0301', '\u0000'), fc.constantFrom(63, 64, 65, 127, 128, 129, 1000, 5000, 20_000))
  .map(([piece, count]) => piece.repeat(count))

export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join('')),
  // A lone surrogate at the start, in the middle or at the end of ordinary text.
  fc
    .tuple(fc.constantFrom(...LONE_SURROGATES), fc.constantFrom('ab', 'hello', 'id_1', '😀x'), fc.nat(2))
    .map(([surrogate, text, at]) => [surrogate + text, text.slice(0, 1) + surrogate + text.slice(1), text + surrogate][at] as string),
  overLong,
  // An emoji straddling a cut at 64 or 128 units: a naive slice leaves half of it.
  fc.constantFrom(63, 127).map((count) => `${'a'.repeat(count)}😀`),
  fc.string({ unit: 'binary', maxLength: 20 }),
)

/**
 * `text` percent-encoded as UTF-8, with a lone surrogate as the three bytes a careless encoder
 * writes for it (WTF-8): the only way a URL can carry one.
 */
export function percentEncode(text: string): string {
  let encoded = ''
  for (const character of text) {
    const code = character.codePointAt(0) as number
    if (code < 0xd800 || code > 0xdfff) encoded += encodeURIComponent(character)
    else for (const byte of [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]) encoded += `%${byte.toString(16).toUpperCase()}`
  }
  return encoded
}

/**
 * `text` as an HTTP header value can carry it: its UTF-8 bytes (a lone surrogate as U+FFFD's),
 * each byte one latin1 character, as Node reads them; the controls Node's parser refuses
 * (all but tab) left out.
 */
export function headerValue(text: string): string {
  const bytes = Buffer.from(text, 'utf8').toString('latin1')
  return [...bytes].filter((character) => character === '\t' || (character >= ' ' && character !== '\u007f')).join('')
}

/** Raw bytes 0x80–0xFF (each a latin1 character to Node), with ordinary characters between. */
const rawHeaderBytes = fc
  .array(fc.oneof(fc.integer({ min: 0x80, max: 0xff }), fc.constantFrom(0x20, 0x41, 0x3d, 0x3b, 0x2c, 0x09)), { minLength: 1, maxLength: 40 })
  .map((bytes) => Buffer.from(bytes).toString('latin1'))

/** Identifiers as an attacker writes them, already in URL form (some deliberately not valid URL encoding). */
const rawIdentifier = fc.oneof(
  fc.constantFrom('%ZZ', '%', '%2', '..', '%2e%2e', '%2F', '%00', 'a%00b', '%E2%80%AE', '%F0%9F%98%80', '%C0%AF', '%ED%A0%80', '%25', '.', '~', '-1', '0', '1e309'),
  fc.integer({ min: 1, max: 3000 }).map((length) => 'a'.repeat(length)),
  fc.constantFrom(127, 128, 129, 130).map((length) => 'x'.repeat(length)),
  fc.string({ maxLength: 40 }).map((text) => encodeURIComponent(text)),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => encodeURIComponent(text)),
  hostileText.map(percentEncode),
)

/** Anything JSON can hold, plus what JSON text can spell but JavaScript cannot hold exactly. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1, 1.5, -0, 1e300, -1e300, 2 ** 53 + 2, '', ' ', '0', 'null', 'yes', '1e309', 'Infinity', 'NaN', '__proto__', '\u0000', '\u202e', 'a'.repeat(5000)),
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 3 }),
)

/** Candidates for a plausible string; the first that fits the schema's pattern and length is taken. */
const PLAUSIBLE_TEXT = ['x', 'EUR', 'example.org', '2026-01-01', 'hello there', '00000000-0000-4000-8000-000000000000']

function plausibleText(schema: JsonSchema): string {
  if (schema.format === 'email') return 'fuzz@example.org'
  if (schema.format === 'iban') return 'DK5000400440116243'
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u')
  const fits = (text: string) => (pattern?.test(text) ?? true) && text.length >= (schema.minLength ?? 0) && text.length <= (schema.maxLength ?? Infinity)
  return PLAUSIBLE_TEXT.find(fits) ?? 'x'.repeat(Math.max(1, schema.minLength ?? 1))
}

/** Plausible values of a schema's type (any of its enum values or alternatives), so that the other fields get past the first check. */
function plausible(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  if (!schema) return fc.constant('x')
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map(plausible))
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  if (type === 'integer' || type === 'number') return fc.constant(1)
  if (type === 'boolean') return fc.boolean()
  if (type === 'array') return plausible(schema.items).map((item) => [item])
  if (type === 'object' || schema.properties) {
    const entries = Object.entries(schema.properties ?? {}).map(([name, property]) => plausible(property).map((value) => [name, value] as const))
    return fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs))
  }
  return fc.constant(plausibleText(schema))
}

/** One plausible value of `schema`, the same every time. */
export function plausibleValue(schema: JsonSchema | undefined): unknown {
  return fc.sample(plausible(schema), { seed: 1, numRuns: 1 })[0]
}

/** A field's value: plausible, of another type, hostile text, or (for an object) fields of its own chosen the same way. */
function fieldFor(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const alternatives = [plausible(schema), anyValue, hostileText]
  if (depth < 3 && (schema.properties || (schema.type === 'array' && schema.items))) alternatives.push(bodyFor(schema, depth + 1))
  return fc.oneof(...alternatives)
}

function bodyFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  // A list body (a JSON Patch): a few items, each plausible or hostile field by field.
  if (schema?.type === 'array' && schema.items) return fc.array(bodyFor(schema.items, depth), { minLength: 1, maxLength: 3 })
  const properties = Object.entries(schema?.properties ?? {})
  if (properties.length === 0) return fc.oneof(anyValue, hostileText)
  const fields = properties.map(([name, property]) => fc.option(fieldFor(property, depth).map((value) => [name, value] as const), { nil: undefined }))
  return fc.tuple(...fields).map((entries) => Object.fromEntries(entries.filter((entry) => entry !== undefined)))
}

const DEEP = 5000

/** A request body: JSON of the object, JSON text no parser accepts, or a body of another kind. */
function payloadFor(schema: JsonSchema | undefined): fc.Arbitrary<{ contentType?: string; payload?: string }> {
  const json = bodyFor(schema).map((value) => ({ contentType: 'application/json', payload: JSON.stringify(value) ?? 'null' }))
  const form = bodyFor(schema).map((value) => ({ contentType: 'application/x-www-form-urlencoded', payload: qs.stringify(value) }))
  const broken = fc.constantFrom(
    { contentType: 'application/json', payload: '{"a":' },
    { contentType: 'application/json', payload: '' },
    { contentType: 'application/json', payload: '{"amount":1e309,"limit":-1e309}' },
    { contentType: 'application/json', payload: `${'['.repeat(DEEP)}${']'.repeat(DEEP)}` },
    { contentType: 'application/json', payload: `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}` },
    { contentType: 'application/json', payload: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}' },
    { contentType: 'application/json', payload: '"\ud800"' },
    { contentType: 'application/json; charset=utf-16', payload: '{}' },
    { contentType: 'application/json;;;', payload: '{}' },
    { contentType: 'text/plain', payload: 'hello' },
    { contentType: 'application/xml', payload: '<a/>' },
    { contentType: 'multipart/form-data; boundary=x', payload: '--x\r\nbroken' },
    { contentType: 'multipart/form-data', payload: 'no boundary' },
    { contentType: 'application/x-www-form-urlencoded', payload: 'a[b][c][d][e][f][g][h][i][j][k]=1&a[0]=2&%ZZ=%ZZ' },
    { contentType: undefined, payload: '{}' },
    { contentType: undefined, payload: undefined },
  )
  return fc.oneof({ weight: 4, arbitrary: json }, { weight: 1, arbitrary: form }, { weight: 2, arbitrary: broken })
}

function queryFor(operation: Operation): fc.Arbitrary<string> {
  const known = operation.query.map(({ name }) => name)
  const names = known.length > 0 ? fc.constantFrom(...known, 'unknown', '__proto__') : fc.constantFrom('limit', 'size', 'page', 'unknown')
  const value = fc.oneof(
    fc.constantFrom('1e309', 'Infinity', '-Infinity', 'NaN', '-1', '0', '1.5', '1e300', '9007199254740993', '', 'true', '%ZZ', 'a'.repeat(3000)),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
    hostileText.map(percentEncode),
  )
  const pair = fc.tuple(names, value).map(([name, item]) => `${encodeURIComponent(name)}=${item}`)
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length > 0 ? `?${pairs.join('&')}` : ''))
}

export interface Credentials {
  /** Headers that pass each service's checks, to reach past them into the routes. */
  valid: Array<Record<string, string>>
  /** Ids of things that exist (a merchant, a transaction, an eperson…), to reach past the lookups. */
  knownIds: string[]
  /** The headers that pass the checks of the service owning `path`. */
  headersFor(path: string): Record<string, string>
  /** An id that exists for the path parameter `name` (`merchantId`, `uuid`…), or a plausible one. */
  idFor(name: string): string
}

/** The request headers some route reads. */
export const READ_HEADERS = [
  'authorization', 'cookie', 'x-xsrf-token', 'idempotency-key', 'x-on-behalf-of', 'accept-version', 'accept-language', 'x-request-id',
  'origin', 'user-agent', 'x-forwarded-for', 'if-none-match', 'x-api-key', 'sec-fetch-site', 'access-control-request-method', 'accept',
]

function headersFor(credentials: Credentials): fc.Arbitrary<Record<string, string>> {
  const garbage = fc.constantFrom<Record<string, string>>(
    { authorization: 'Basic Og==' },
    { authorization: `Basic ${Buffer.from(`:${'k'.repeat(4000)}`).toString('base64')}` },
    { authorization: 'Bearer not.a.jwt' },
    { authorization: `Bearer ${'e'.repeat(8000)}` },
    { authorization: 'Negotiate \u0000' },
    { 'accept-version': '2' },
    { 'accept-version': '1', 'idempotency-key': 'k'.repeat(300) },
    { 'x-on-behalf-of': '../../etc/passwd' },
    { cookie: 'DSPACE-XSRF-COOKIE=%ZZ; a' },
    { 'x-forwarded-for': 'not an address' },
    { 'x-request-id': 'r'.repeat(500) },
    { 'x-big': 'h'.repeat(16_000) },
  )
  const text = fc.oneof(hostileText.map(headerValue), rawHeaderBytes)
  // Hostile text in a header a route reads, where it can reach furthest (inside credentials, a cookie).
  const hostile = fc.oneof(
    fc.tuple(fc.constantFrom(...READ_HEADERS), text).map(([name, value]) => ({ [name]: value })),
    text.map((value) => ({ authorization: `Bearer ${value}` })),
    text.map((value) => ({ authorization: `Basic ${Buffer.from(`:${value}`, 'latin1').toString('base64')}` })),
    hostileText.map((value) => ({ authorization: `Basic ${Buffer.from(`:${value}`).toString('base64')}` })),
    text.map((value) => ({ cookie: `DSPACE-XSRF-COOKIE=${value}; dashboard=${value}` })),
  )
  const odd = fc.oneof(garbage, hostile)
  return fc.oneof(fc.constant({}), fc.constantFrom(...credentials.valid), odd, fc.tuple(fc.constantFrom(...credentials.valid), odd).map(([a, b]) => ({ ...a, ...b })))
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']

/** One malformed request for one of `operations`. */
export function requestArbitrary(operations: Operation[], credentials: Credentials): fc.Arbitrary<FuzzRequest> {
  return fc
    .constantFrom(...operations)
    .chain((operation) =>
      fc.record({
        operation: fc.constant(operation),
        method: fc.oneof({ weight: 5, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) }),
        ids: fc.array(fc.oneof(rawIdentifier, fc.constantFrom(...credentials.knownIds)), { minLength: operation.pathParams.length, maxLength: operation.pathParams.length }),
        query: queryFor(operation),
        body: payloadFor(operation.body),
        headers: headersFor(credentials),
      }),
    )
    .map(({ operation, method, ids, query, body, headers }) => {
      let path = operation.path
      operation.pathParams.forEach((name, index) => {
        path = path.replace(`{${name}}`, ids[index] ?? 'x')
      })
      const sendsBody = method !== 'GET' && method !== 'HEAD'
      const allHeaders = { ...headers, ...(sendsBody && body.contentType ? { 'content-type': body.contentType } : {}) }
      return {
        method,
        url: `${path}${query}`,
        headers: allHeaders,
        payload: sendsBody ? body.payload : undefined,
        note: `${method} ${operation.path}`,
      }
    })
}
