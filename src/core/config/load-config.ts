import { type TObject, type TSchema, Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parse as parseDotenv } from 'dotenv'
import { existsSync, readFileSync } from 'node:fs'

/**
 * A part of the configuration: the environment variables it reads (a TypeBox object whose
 * properties are named after the variables, each with a `description` saying what is
 * expected) and how the validated strings become the typed settings the code uses.
 */
export interface ConfigSection<S extends TObject, T> {
  schema: S
  build(env: Static<S>): T
}

export function defineSection<S extends TObject, T>(schema: S, build: (env: Static<S>) => T): ConfigSection<S, T> {
  return { schema, build }
}

export class ConfigError extends Error {
  problems: string[]
  constructor(problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/** Reads `.env` in the working directory, without overriding variables already set. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env, dotenvPath = '.env'): Record<string, string | undefined> {
  const fromFile = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath)) : {}
  return { ...fromFile, ...env }
}

function describeProblem(key: string, schema: TSchema | undefined, raw: unknown): string {
  const expected = schema?.description ?? 'a valid value'
  return `${key} must be ${expected} (got ${JSON.stringify(raw)})`
}

/**
 * Validates the environment against every section and builds the typed configuration.
 * Empty strings count as unset, so `PORT=` falls back to the default like a missing PORT.
 * Every bad variable is reported at once, so an operator fixes them in one go.
 */
export function loadSections<R extends Record<string, ConfigSection<TObject, unknown>>>(
  sections: R,
  env: Record<string, string | undefined>,
): { [K in keyof R]: ReturnType<R[K]['build']> } {
  const problems: string[] = []
  const built: Record<string, unknown> = {}
  for (const [name, section] of Object.entries(sections)) {
    const raw: Record<string, unknown> = {}
    for (const key of Object.keys(section.schema.properties)) {
      const value = env[key]
      if (value !== undefined && value !== '') raw[key] = value
    }
    const withDefaults = Value.Default(section.schema, Value.Convert(section.schema, raw))
    const errors = [...Value.Errors(section.schema, withDefaults)]
    if (errors.length > 0) {
      const seen = new Set<string>()
      for (const error of errors) {
        const key = error.path.split('/')[1] ?? error.path
        if (seen.has(key)) continue
        seen.add(key)
        problems.push(describeProblem(key, section.schema.properties[key], raw[key]))
      }
      continue
    }
    try {
      built[name] = section.build(withDefaults as Static<typeof section.schema>)
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error))
    }
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return deepFreeze(built) as { [K in keyof R]: ReturnType<R[K]['build']> }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

/** Schema helpers that carry the "what is expected" text used in error messages. */
export const Env = {
  port: (defaultValue: number) => Type.Integer({ minimum: 0, maximum: 65535, default: defaultValue, description: 'an integer port between 0 and 65535' }),
  string: (description: string, options: { default?: string; pattern?: string } = {}) => Type.String({ description, ...options }),
  optionalString: (description: string, options: { pattern?: string } = {}) => Type.Optional(Type.String({ description, ...options })),
  boolean: (defaultValue: boolean) => Type.Boolean({ default: defaultValue, description: '"true" or "false"' }),
  integer: (description: string, defaultValue: number, minimum = 0) => Type.Integer({ description, default: defaultValue, minimum }),
  duration: (defaultValue: string) =>
    Type.String({ pattern: '^\\d+(ms|s|m|h|d)$', default: defaultValue, description: 'a duration such as 500ms, 30s, 30m, 24h or 7d' }),
  enumOf: <T extends string>(values: readonly T[], defaultValue: T) =>
    Type.Union(
      values.map((value) => Type.Literal(value)),
      { default: defaultValue, description: `one of ${values.join(', ')}` },
    ),
}

/** Splits a comma-separated list, dropping blanks. */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0)
}
