import formbody from '@fastify/formbody'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import qs from 'qs'

const TRUE_WORDS = new Set(['yes', 'y', 'true', '1', 'on'])
const FALSE_WORDS = new Set(['no', 'n', 'false', '0', 'off'])

interface JsonSchemaLike {
  type?: string | string[]
  properties?: Record<string, JsonSchemaLike>
  items?: JsonSchemaLike
  anyOf?: JsonSchemaLike[]
  oneOf?: JsonSchemaLike[]
  allOf?: JsonSchemaLike[]
}

function allowsBoolean(schema: JsonSchemaLike): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  if (types.includes('boolean')) return true
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(allowsBoolean)
}

function allowsString(schema: JsonSchemaLike): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  if (types.includes('string')) return true
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(allowsString)
}

function propertiesOf(schema: JsonSchemaLike): Record<string, JsonSchemaLike> {
  const merged: Record<string, JsonSchemaLike> = { ...schema.properties }
  for (const part of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    Object.assign(merged, propertiesOf(part))
  }
  return merged
}

/**
 * Form bodies carry only strings. Where the route's schema says boolean, the words `yes`/`no`
 * (Paylike's form convention) and `true`/`false` become booleans; numbers are left to the
 * validator's own coercion, and strings stay strings (`company[number]=07654321` keeps its zero).
 */
function coerceFormBooleans(value: unknown, schema: JsonSchemaLike | undefined): unknown {
  if (!schema || value === null || value === undefined) return value
  if (typeof value === 'string') {
    if (allowsBoolean(schema) && !allowsString(schema)) {
      const word = value.toLowerCase()
      if (TRUE_WORDS.has(word)) return true
      if (FALSE_WORDS.has(word)) return false
    }
    return value
  }
  if (Array.isArray(value)) return value.map((item) => coerceFormBooleans(item, schema.items))
  if (typeof value === 'object') {
    const properties = propertiesOf(schema)
    const result: Record<string, unknown> = {}
    for (const [key, child] of Object.entries(value)) result[key] = coerceFormBooleans(child, properties[key])
    return result
  }
  return value
}

function isFormRequest(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
}

/**
 * JSON (also as `application/vnd.api+json`) and URL-encoded form bodies with bracket nesting
 * (`company[country]=DK` → `{ company: { country: 'DK' } }`).
 */
export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  await app.register(formbody, {
    parser: (body: string) => qs.parse(body, { depth: 5, parameterLimit: 1000, arrayLimit: 100, allowDots: false }),
  })
  app.addContentTypeParser('application/vnd.api+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'ignore'))
  // Only routes that take a body pay for the form coercion hook.
  app.addHook('onRoute', (route) => {
    const bodySchema = route.schema?.body as JsonSchemaLike | undefined
    if (!bodySchema) return
    const coerceFormFields = async (request: FastifyRequest) => {
      if (request.body && isFormRequest(request)) request.body = coerceFormBooleans(request.body, bodySchema)
    }
    route.preValidation = route.preValidation === undefined ? [coerceFormFields] : [coerceFormFields, ...(Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation])]
  })
}
