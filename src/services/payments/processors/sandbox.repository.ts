import type { DialectName } from '../../../core/db/create-db.ts'
import { prepared } from '../../../core/db/prepared.ts'
import type { PaymentsDb, PaymentsTables, SandboxCardsTable } from '../tables.ts'

// The sandbox acquirer's own table (payments_sandbox_cards): a test card's status, balance and limit.

const cardState = prepared<PaymentsTables, 'ref', SandboxCardsTable>((db, p) => db.selectFrom('payments_sandbox_cards').selectAll().where('card_ref', '=', p.ref))

/** A test card's state, or undefined when the card was never given one. A prepared statement: every test authorization asks. */
export async function findCardState(db: PaymentsDb, dialect: DialectName, ref: string): Promise<SandboxCardsTable | undefined> {
  return (await cardState(db, dialect, { ref })).rows[0]
}

/**
 * Draws `amount` from the card's balance if it holds that much: the check and the draw are one
 * conditional update, so two charges at once cannot both spend the same balance. False when
 * the balance was short.
 */
export async function drawFromBalance(db: PaymentsDb, ref: string, amount: number, updated: string): Promise<boolean> {
  const result = await db
    .updateTable('payments_sandbox_cards')
    .set((eb) => ({ balance: eb('balance', '-', amount), updated }))
    .where('card_ref', '=', ref)
    .where('balance', '>=', amount)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function upsertCardState(db: PaymentsDb, row: SandboxCardsTable): Promise<void> {
  await db
    .insertInto('payments_sandbox_cards')
    .values(row)
    .onConflict((oc) => oc.column('card_ref').doUpdateSet({ ...row }))
    .execute()
}
