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

/**
 * Where the first number that no API of ours can mean sits in `value`, as a JSON pointer:
 * Infinity, NaN, or an integer past ±(2^53 − 1), which JavaScript cannot hold exactly (and
 * PostgreSQL's bigint cannot hold at all). Iterative, so a deeply nested body cannot
 * overflow the stack.
 */
function firstUnrepresentableNumber(value: unknown): { path: string; message: string } | undefined {
  const pending: Array<[unknown, string]> = [[value, '']]
  while (pending.length > 0) {
    const [item, path] = pending.pop() as [unknown, string]
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return { path, message: 'must be a finite number' }
      if (Number.isInteger(item) && !Number.isSafeInteger(item)) return { path, message: `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}` }
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, child] of Object.entries(item)) pending.push([child, `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`])
    }
  }
  return undefined
}

/**
 * Fastify's own Ajv validators, with one rule added after them for every part of every
 * request (path, query, headers, body): numbers are finite and exact. Ajv's type coercion
 * turns the query string `limit=1e309` into Infinity and then skips `maximum`, so the rule
 * cannot be left to the schemas (it was a 500 in all three services).
 */
export function finiteNumberValidators(): BuildCompilerFromPool {
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
        const problem = firstUnrepresentableNumber(value)
        if (problem === undefined) return true
        const error: AjvProblem = { instancePath: problem.path, keyword: 'finite', message: problem.message, params: {} }
        guarded.errors = [error]
        return false
      }
      // Fastify passes the parent (so the root can be coerced) only to validators that say they are Ajv's.
      guarded.schemaEnv = validate.schemaEnv
      return guarded as never
    }
  }
}
