import fc from 'fast-check'
import qs from 'qs'

/**
 * Malformed requests for every operation of the OpenAPI document: hostile path identifiers,
 * wrong types and unrepresentable numbers in queries and bodies, broken and deeply nested
 * JSON, wrong content types and methods, odd and oversized headers.
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

/** Identifiers as an attacker writes them, already in URL form (some deliberately not valid URL encoding). */
const rawIdentifier = fc.oneof(
  fc.constantFrom('%ZZ', '%', '%2', '..', '%2e%2e', '%2F', '%00', 'a%00b', '%E2%80%AE', '%F0%9F%98%80', '%C0%AF', '%ED%A0%80', '%25', '.', '~', '-1', '0', '1e309'),
  fc.integer({ min: 1, max: 3000 }).map((length) => 'a'.repeat(length)),
  fc.constantFrom(127, 128, 129, 130).map((length) => 'x'.repeat(length)),
  fc.string({ maxLength: 40 }).map((text) => encodeURIComponent(text)),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => encodeURIComponent(text)),
)

/** Anything JSON can hold, plus what JSON text can spell but JavaScript cannot hold exactly. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1, 1.5, -0, 1e300, -1e300, 2 ** 53 + 2, '', ' ', '0', 'null', 'yes', '1e309', 'Infinity', 'NaN', '__proto__', '\u0000', '\u202e', 'a'.repeat(5000)),
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 3 }),
)

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
  if (type === 'object') {
    const entries = Object.entries(schema.properties ?? {}).map(([name, property]) => plausible(property).map((value) => [name, value] as const))
    return fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs))
  }
  return fc.constant('x')
}

function bodyFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  // A list body (a JSON Patch): a few items, each plausible or hostile field by field.
  if (schema?.type === 'array' && schema.items) return fc.array(bodyFor(schema.items), { minLength: 1, maxLength: 3 })
  const properties = Object.entries(schema?.properties ?? {})
  if (properties.length === 0) return anyValue
  const fields = properties.map(([name, property]) =>
    fc.oneof(plausible(property).map((value) => [name, value] as const), anyValue.map((value) => [name, value] as const), fc.constant(undefined)),
  )
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
  )
  const pair = fc.tuple(names, value).map(([name, item]) => `${encodeURIComponent(name)}=${item}`)
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length > 0 ? `?${pairs.join('&')}` : ''))
}

export interface Credentials {
  /** Headers that pass each service's checks, to reach past them into the routes. */
  valid: Array<Record<string, string>>
  /** Ids of things that exist (a merchant, a transaction, an eperson…), to reach past the lookups. */
  knownIds: string[]
}

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
  return fc.oneof(fc.constant({}), fc.constantFrom(...credentials.valid), garbage, fc.tuple(fc.constantFrom(...credentials.valid), garbage).map(([a, b]) => ({ ...a, ...b })))
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
