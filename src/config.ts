import { coreSection } from './core/config/core-config.ts'
import { loadSections, readEnvironment } from './core/config/load-config.ts'
import { authnSection } from './services/authn/config.ts'
import { avatarSection } from './services/avatar/config.ts'
import { paymentsSection } from './services/payments/config.ts'

export { ConfigError } from './core/config/load-config.ts'

const sections = {
  core: coreSection,
  authn: authnSection,
  avatar: avatarSection,
  payments: paymentsSection,
}

export type Config = ReturnType<typeof loadSections<typeof sections>>

/** Every environment variable Triad reads, for `.env.example` and the docs. */
export const configSchemas = Object.values(sections).map((section) => section.schema)

/**
 * Reads the configuration from `env` (process.env and `.env` by default), validated and frozen.
 * Throws ConfigError naming every bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = readEnvironment()): Config {
  return loadSections(sections, env)
}
