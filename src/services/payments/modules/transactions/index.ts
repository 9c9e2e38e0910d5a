// Transactions own every movement of money (authorize, capture, refund, void, dispute debit and
// reversal, recurring charge), the trail and the ledger lines those movements write.
export { createDisputeMovements, type DisputeMovements, type LockedTransaction } from './dispute-movements.ts'
export { transactionsRoutes } from './transactions.routes.ts'
export {
  cardExpiry,
  createTransactionsService,
  type NewTransaction,
  recordTransaction,
  type StoredCards,
  type TransactionsService,
} from './transactions.service.ts'
