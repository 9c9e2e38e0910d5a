import type { DialectName } from '../../../../core/db/create-db.ts'
import type { PaymentsDb } from '../../tables.ts'
import type { MerchantRow } from '../../tables.ts'
import { type ClientMerchant, findMerchant, findMerchantByKey } from './merchants.repository.ts'

export type { ClientMerchant }

/**
 * The merchants module's port for the customer side (the client payment API, the hosted page):
 * the merchant a public key names, with what a payment needs, without the merchant API's
 * membership rules. A prepared statement: every authorization asks it.
 */
export function createMerchantDirectory(database: { db: PaymentsDb; dialect: DialectName }) {
  return {
    byKey: (key: string): Promise<ClientMerchant | undefined> => findMerchantByKey(database.db, database.dialect, key),
    /** The merchant by id, for operators (the CLI), who are members of none. */
    byId: (id: string): Promise<MerchantRow | undefined> => findMerchant(database.db, id),
  }
}

