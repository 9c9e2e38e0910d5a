// Transactions own every movement of money (authorize, capture, refund, void, dispute debit and
// reversal, recurring charge), the trail and the ledger lines those movements write.
export { createDisputeMovements, type DisputeMovements } from './dispute-movements.ts'
export { transactionsRoutes } from './transactions.routes.ts'
export {
  cardExpiry,
  createTransactionsService,
  recordTransaction,
} from './transactions.service.ts'
