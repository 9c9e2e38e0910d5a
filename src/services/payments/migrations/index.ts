import type { MigrationSet } from '../../../core/db/migrator.ts'
import * as createMerchantApi from './202611220030_create_merchant_api.ts'
import * as createVault from './202611220100_create_vault.ts'
import * as shardMerchantBalances from './202611220130_shard_merchant_balances.ts'
import * as spentVaultTokens from './202611220140_spent_vault_tokens.ts'
import * as createWebhooks from './202611250100_create_webhooks.ts'
import * as createDashboardSessions from './202611251900_create_dashboard_sessions.ts'
import * as rotateWebhookSecrets from './202611281400_rotate_webhook_secrets.ts'
import * as dashboardUserSignIn from './202611281700_dashboard_user_sign_in.ts'

/** Every migration of this service, by name; names sort in the order they run. Never edit one that has shipped. */
export const migrations: MigrationSet = {
  '202611220030_create_merchant_api': createMerchantApi,
  '202611220100_create_vault': createVault,
  '202611220130_shard_merchant_balances': shardMerchantBalances,
  '202611220140_spent_vault_tokens': spentVaultTokens,
  '202611250100_create_webhooks': createWebhooks,
  '202611251900_create_dashboard_sessions': createDashboardSessions,
  '202611281400_rotate_webhook_secrets': rotateWebhookSecrets,
  '202611281700_dashboard_user_sign_in': dashboardUserSignIn,
}
