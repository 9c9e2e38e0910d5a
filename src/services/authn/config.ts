import { Type } from '@sinclair/typebox'
import { parseDuration } from '../../core/config/duration.ts'
import { defineSection, Env } from '../../core/config/load-config.ts'

export const authnSection = defineSection(
  Type.Object({
    AUTHN_ADMIN_EMAIL: Env.optionalString('an e-mail address'),
    AUTHN_ADMIN_PASSWORD: Env.optionalString('a password'),
    AUTHN_TOKEN_LIFETIME: Env.duration('30m'),
    AUTHN_SECRET: Env.optionalString('a secret of at least 32 characters', { pattern: '^.{32,}$' }),
  }),
  (env) => ({
    adminEmail: env.AUTHN_ADMIN_EMAIL,
    adminPassword: env.AUTHN_ADMIN_PASSWORD,
    tokenLifetimeMs: parseDuration(env.AUTHN_TOKEN_LIFETIME),
    secret: env.AUTHN_SECRET,
  }),
)

export type AuthnConfig = ReturnType<typeof authnSection.build>
