import assert from 'node:assert/strict'
import type { Kysely } from 'kysely'
import { runCommand } from '../../../../src/core/cli/command.ts'
import { createSecrets } from '../../../../src/core/security/keyring.ts'
import { paymentsService } from '../../../../src/services/payments/app.ts'
import type { VaultTables } from '../../../../src/services/payments/modules/vault/vault.table.ts'
import { serviceBaseOf, type TestApp } from '../../../helpers/build-app.ts'
import { clientJson, pay, paymentBody } from '../client/helpers.ts'
import type { PaymentsTestApp } from '../helpers.ts'

export const FRICTIONLESS = { tds: { challenge: false, fingerprint: 'unavailable' } }

/** Runs `triad payments …` as another process would: the same database and secrets file, its own keyring. */
export async function paymentsCli(test_: TestApp, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const group = paymentsService.commands?.({
    withService: (work) =>
      work({
        ...serviceBaseOf(test_, { secrets: createSecrets(test_.secretStore, test_.clock) }),
        config: test_.config.payments,
      }),
  })
  assert.ok(group)
  const code = await runCommand(group, argv, { out: (text) => out.push(text), err: (text) => err.push(text) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

/** A frictionless test payment with a fresh card; returns its authorization (transaction) id. */
export async function payWithCard(fixture: { app: TestApp['app']; key: string }, body?: Record<string, unknown>): Promise<string> {
  const response = await pay(fixture.app, body ?? (await paymentBody(fixture.app, fixture.key, { test: FRICTIONLESS })))
  assert.equal(response.statusCode, 200, response.body)
  return clientJson<{ authorizationId: string }>(response).authorizationId
}

/** The sealed card number behind a transaction. */
export async function sealedCardOf(fixture: PaymentsTestApp, transactionId: string): Promise<string> {
  const { card_ref } = await fixture.db.selectFrom('payments_transactions').select('card_ref').where('id', '=', transactionId).executeTakeFirstOrThrow()
  const row = await (fixture.db as unknown as Kysely<VaultTables>)
    .selectFrom('payments_vault_cards')
    .select('sealed')
    .where('id', '=', String(card_ref))
    .executeTakeFirstOrThrow()
  return row.sealed
}
