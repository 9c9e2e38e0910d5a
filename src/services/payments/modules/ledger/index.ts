// The ledger (payments_lines, payments_balance_shards): read by merchants over /lines; written
// only by the transactions module, through postLine, inside the movement's database transaction.
export { postLine } from './ledger.repository.ts'
export { linesRoutes } from './lines.routes.ts'
export { createLinesService } from './lines.service.ts'
