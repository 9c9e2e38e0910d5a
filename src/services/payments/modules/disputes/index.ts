// Disputes and fraud alerts (payments_disputes, payments_frauds); their money moves through transactions.
export { disputesRoutes } from './disputes.routes.ts'
export { createDisputesService, type DisputesService } from './disputes.service.ts'
