import type { FastifyInstance } from 'fastify'
import fastJsonStringify, { type Schema } from 'fast-json-stringify'
import { fieldError } from './errors.ts'

interface SchemaLike {
  type?: string
  items?: Schema
  'x-raw'?: boolean
}

type Serializer = (data: unknown) => string

/**
 * The dotted path of the first string (or key) holding a NUL character, if any. The path is
 * built only for a hit, on the way back up: every request's body is walked, and a path string
 * per key cost more than the walk.
 */
function findNul(value: unknown, path: string): string | undefined {
  const hit = nulAt(value, 0)
  if (hit === undefined) return undefined
  let found = path
  for (let index = hit.keys.length - 1; index >= 0; index--) found = found ? `${found}.${hit.keys[index]}` : (hit.keys[index] as string)
  return hit.inKey ? found : found || 'body'
}

/** Where the first NUL sits: the keys leading to it (innermost first), and whether it is in a key rather than a string. */
function nulAt(value: unknown, depth: number): { keys: string[]; inKey: boolean } | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { keys: [], inKey: false } : undefined
  if (value === null || typeof value !== 'object' || depth > 20) return undefined
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (key.includes('\u0000')) return { keys: [key], inKey: true }
    const below = nulAt(record[key], depth + 1)
    if (below) {
      below.keys.push(key)
      return below
    }
  }
  return undefined
}

/**
 * Serialises every payments response the way Paylike's official Node client reads it: the
 * client parses a success body line by line, so a list is `[` newline, one compact item per
 * line joined by `,` newline, then newline `]` (empty: `[` newline `]`); a single object is
 * compact, on one line. PHP, Go and .NET clients read the same bytes as ordinary JSON.
 * Error bodies (`x-raw`) are plain compact JSON, whatever their shape.
 */
function compileSerializer(schema: SchemaLike): Serializer {
  if (schema['x-raw']) return (data) => JSON.stringify(data)
  if (schema.type === 'array' && schema.items) {
    const item = fastJsonStringify(schema.items) as Serializer
    return (data) => {
      const items = data as unknown[]
      return items.length === 0 ? '[\n]' : `[\n${items.map(item).join(',\n')}\n]`
    }
  }
  return fastJsonStringify(schema as Schema) as Serializer
}

/**
 * Installs the wire format on the payments scope: the serializer above, and JSON parsers that
 * read an empty body as `{}` (the Node client sends `Content-Type: application/json` with no
 * body for `POST /apps` and for `merchants.create()` without data; the answer must be the
 * validation array, not a parse error). `application/vnd.api+json` (php-api) is JSON too.
 */
export function installWireFormat(app: FastifyInstance): void {
  app.setSerializerCompiler(({ schema }) => compileSerializer(schema as SchemaLike))
  const parseJson = app.getDefaultJsonParser('error', 'ignore')
  app.removeContentTypeParser(['application/json', 'application/vnd.api+json'])
  app.addContentTypeParser(['application/json', 'application/vnd.api+json'], { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') {
      done(null, {})
      return
    }
    parseJson(request, String(body), done)
  })
  // A POST or PUT with no body at all (no Content-Type either) validates as an empty object.
  // Synchronous (done callback): it runs on every request, and an async hook costs a promise.
  app.addHook('preValidation', function normaliseWireInput(request, _reply, done) {
    if ((request.method === 'POST' || request.method === 'PUT') && (request.body === undefined || request.body === null)) request.body = {}
    // PostgreSQL text cannot hold NUL; refuse it up front on both engines, naming the field.
    const field = findNul(request.params, 'params') ?? findNul(request.query, 'query') ?? findNul(request.body, '')
    done(field === undefined ? undefined : fieldError(field, 'must not contain NUL characters'))
  })
}
