import { Type } from '@sinclair/typebox'
import { defineSection, Env } from '../../core/config/load-config.ts'

export const paymentsSection = defineSection(
  Type.Object({
    PAYMENTS_VAULT_KEY: Env.optionalString('32 bytes as 64 hexadecimal digits', { pattern: '^[0-9a-fA-F]{64}$' }),
  }),
  (env) => ({
    vaultKey: env.PAYMENTS_VAULT_KEY,
  }),
)

export type PaymentsConfig = ReturnType<typeof paymentsSection.build>
