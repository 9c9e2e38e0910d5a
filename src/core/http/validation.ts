import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'

interface AjvProblem {
  instancePath: string
  keyword: string
  message: string
  params: Record<string, unknown>
}

interface AjvValidate {
  (data: unknown, context?: { parentData: Record<string, unknown>; parentDataProperty: string }): boolean
  errors?: unknown
  schemaEnv?: unknown
}

/** Why one string of a request cannot be taken, if it cannot. */
function textProblem(text: string): string | undefined {
  // UTF-8 (every body we answer, both databases, the logs) has no bytes for a lone surrogate:
  // keeping one would mean replacing it, and two different ids would become one.
  if (!text.isWellFormed()) return 'must be well-formed Unicode text (it holds a lone surrogate)'
  // PostgreSQL text cannot hold NUL (SQLite can): refused on both engines alike.
  if (text.includes('\u0000')) return 'must not contain NUL characters'
  return undefined
}

/**
 * Where the first value that no API of ours can mean sits in `value`, as a JSON pointer: a
 * number that is Infinity, NaN, or an integer past ±(2^53 − 1), which JavaScript cannot hold
 * exactly (and PostgreSQL's bigint cannot hold at all); a string, or an object key, that is
 * not well-formed Unicode or holds NUL. Iterative, so a deeply nested body cannot overflow
 * the stack.
 */
export function firstUnacceptableValue(value: unknown): { path: string; message: string } | undefined {
  // Each value remembers its parent and key; the pointer is spelled out only for a problem
  // (every request is walked, and a pointer string per key cost more than the walk).
  const pending: PendingValue[] = [{ item: value, parent: undefined, key: '' }]
  while (pending.length > 0) {
    const node = pending.pop() as PendingValue
    const item = node.item
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return { path: pointerOf(node), message: 'must be a finite number' }
      if (Number.isInteger(item) && !Number.isSafeInteger(item)) return { path: pointerOf(node), message: `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}` }
    } else if (typeof item === 'string') {
      const message = textProblem(item)
      if (message !== undefined) return { path: pointerOf(node), message }
    } else if (typeof item === 'object' && item !== null) {
      const record = item as Record<string, unknown>
      for (const key of Object.keys(record)) {
        const child: PendingValue = { item: record[key], parent: node, key }
        const message = textProblem(key)
        if (message !== undefined) return { path: pointerOf(child), message: `is not an accepted name: it ${message}` }
        pending.push(child)
      }
    }
  }
  return undefined
}

interface PendingValue {
  item: unknown
  /** Undefined for the root. */
  parent: PendingValue | undefined
  key: string
}

/** The JSON pointer of a value found by firstUnacceptableValue. */
function pointerOf(node: PendingValue): string {
  let path = ''
  for (let at: PendingValue = node; at.parent !== undefined; at = at.parent) path = `/${at.key.replaceAll('~', '~0').replaceAll('/', '~1')}${path}`
  return path
}

/**
 * Fastify's own Ajv validators, with rules added after them for every part of every request
 * (path, query, headers, body): numbers are finite and exact, text is well-formed and free of
 * NUL. Ajv's type coercion turns the query string `limit=1e309` into Infinity and then skips
 * `maximum`, and no schema keyword states the text rules, so they cannot be left to the
 * schemas (each was a 500 in some service).
 */
export function guardedValidators(): BuildCompilerFromPool {
  const build = AjvCompiler()
  return (externalSchemas, ajvOptions) => {
    const compile = build(externalSchemas, ajvOptions)
    return (route) => {
      const validate = compile(route) as unknown as AjvValidate
      const guarded: AjvValidate = (data, context) => {
        if (!validate(data, context)) {
          guarded.errors = validate.errors
          return false
        }
        // Ajv may have replaced the root value itself (coercion), in the parent it was given.
        const value = context ? context.parentData[context.parentDataProperty] : data
        const problem = firstUnacceptableValue(value)
        if (problem === undefined) return true
        const error: AjvProblem = { instancePath: problem.path, keyword: 'acceptable', message: problem.message, params: {} }
        guarded.errors = [error]
        return false
      }
      // Fastify passes the parent (so the root can be coerced) only to validators that say they are Ajv's.
      guarded.schemaEnv = validate.schemaEnv
      return guarded as never
    }
  }
}
