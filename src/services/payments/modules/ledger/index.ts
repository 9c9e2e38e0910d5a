// The ledger (payments_lines, payments_balance_shards): read by merchants over /lines; written
// only by the transactions module, through postLine, inside the movement's database transaction.
export { type LedgerMerchant, postLine, type PostLineInput } from './ledger.repository.ts'
export { linesRoutes } from './lines.routes.ts'
export { createLinesService, type LinesService } from './lines.service.ts'
